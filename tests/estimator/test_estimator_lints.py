"""Each lint rule fires on a crafted config (and stays quiet on a clean one)."""

from __future__ import annotations

from typing import Any

from hubwatch.estimator import analyze

BASE: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 512, "num_attention_heads": 8,
    "num_key_value_heads": 4, "num_hidden_layers": 4, "intermediate_size": 1024, "vocab_size": 32000,
    "max_position_embeddings": 4096, "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0,
    "torch_dtype": "bfloat16", "use_cache": True,
}


def rules(cfg: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {f.rule: f for f in analyze(cfg, **kw).findings}


def test_clean_config_has_no_findings() -> None:
    assert rules(BASE, generation_config={"eos_token_id": 2}) == {}


def test_kv_heads_not_dividing_heads() -> None:
    found = rules({**BASE, "num_key_value_heads": 3})
    assert found["kv-heads-divide-heads"].level == "error"
    assert "num_key_value_heads" in found["kv-heads-divide-heads"].fix


def test_heads_not_dividing_hidden() -> None:
    assert "heads-divide-hidden" in rules({**BASE, "num_attention_heads": 7, "num_key_value_heads": 7})


def test_vocab_smaller_than_tokenizer_ids() -> None:
    tok = {"added_tokens_decoder": {"32000": {"content": "<|im_end|>"}, "5": {"content": "x"}}}
    found = rules(BASE, tokenizer_config=tok)
    assert "32001" in found["vocab-smaller-than-tokenizer"].fix


def test_special_token_beyond_vocab() -> None:
    assert "token-id-beyond-vocab" in rules({**BASE, "eos_token_id": [2, 40000]})


def test_eos_missing_from_generation_config() -> None:
    found = rules(BASE, generation_config={"temperature": 0.6})
    assert found["eos-missing-from-generation-config"].level == "warning"
    assert "eos-mismatch" in rules(BASE, generation_config={"eos_token_id": 7})


def test_rope_scaling_inconsistent_with_max_positions() -> None:
    cfg = {**BASE, "max_position_embeddings": 131072,
           "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}}
    assert "rope-scaling-inconsistent" in rules(cfg)
    ok = {**cfg, "rope_scaling": {**cfg["rope_scaling"], "factor": 32.0}}
    assert "rope-scaling-inconsistent" not in rules(ok)


def test_float32_on_a_large_model() -> None:
    big = {**BASE, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
           "num_hidden_layers": 32, "intermediate_size": 11008, "torch_dtype": "float32"}
    assert "float32-large-model" in rules(big)
    assert "float32-large-model" not in rules({**BASE, "torch_dtype": "float32"})


def test_custom_code_required() -> None:
    found = rules({**BASE, "auto_map": {"AutoModelForCausalLM": "modeling_x.XForCausalLM"}})
    assert "trust_remote_code" in found["custom-code-required"].message


def test_missing_final_norm_before_output() -> None:
    cfg = {**BASE, "model_type": "chatglm", "architectures": ["ChatGLMModel"], "rmsnorm": True,
           "post_layer_norm": False, "multi_query_attention": True, "multi_query_group_num": 2}
    assert "no-norm-before-output" in rules(cfg)
    assert "no-norm-before-output" not in rules({**cfg, "post_layer_norm": True})


def test_deep_stack_without_depth_scaled_init() -> None:
    assert "deep-stack-without-depth-scaled-init" in rules({**BASE, "num_hidden_layers": 64})
    vision = {"model_type": "siglip_vision_model", "hidden_size": 128, "num_attention_heads": 4,
              "num_hidden_layers": 27, "intermediate_size": 256, "image_size": 224, "patch_size": 14}
    llava = {"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
             "text_config": {**BASE, "num_hidden_layers": 30}, "vision_config": vision}
    assert "deep-stack-without-depth-scaled-init" not in rules(llava)  # 30 + 27 layers, but no stack of 48
    assert "deep-stack-without-depth-scaled-init" not in rules({**BASE, "num_hidden_layers": 64,
                                                                 "residual_multiplier": 0.22})


def test_pad_token_missing_is_judged_from_the_tokenizer() -> None:
    cfg = {k: v for k, v in BASE.items() if k != "pad_token_id"}
    assert "pad-token-missing" not in rules(cfg)  # a config alone cannot tell
    assert "pad-token-missing" in rules(cfg, tokenizer_config={"pad_token": None, "eos_token": "</s>"})
    assert "pad-token-missing" not in rules(cfg, tokenizer_config={"pad_token": "<pad>"})
    custom = {"pad_token": None, "auto_map": {"AutoTokenizer": ["tokenization_x.XTokenizer", None]}}
    assert "pad-token-missing" not in rules(cfg, tokenizer_config=custom)  # its code may define one


def test_eos_from_model_config_counts_when_generation_config_was_derived_from_it() -> None:
    derived = {"_from_model_config": True, "transformers_version": "4.32.1"}
    assert "eos-missing-from-generation-config" not in rules(BASE, generation_config=derived)
    no_eos = {k: v for k, v in BASE.items() if k != "eos_token_id"}
    assert "eos-missing-from-generation-config" in rules(no_eos, generation_config=derived)


def test_llama3_rope_scaling_is_not_judged_by_the_plain_product() -> None:
    llama31 = {**BASE, "max_position_embeddings": 131072, "rope_scaling": {
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192}}
    assert "rope-scaling-inconsistent" not in rules(llama31)
    too_long = {**llama31, "max_position_embeddings": 4096}  # the original context beyond the model's
    assert "rope-scaling-inconsistent" in rules(too_long)


def test_generation_parameters_in_config() -> None:
    found = rules({**BASE, "max_length": 4096, "temperature": 1.0})  # temperature 1.0 is the default
    assert "max_length=4096" in found["generation-params-in-config"].message
    assert "temperature" not in found["generation-params-in-config"].fix


def test_context_length_rules() -> None:
    assert "tokenizer-longer-than-model" in rules(BASE, tokenizer_config={"model_max_length": 32768})
    assert "sliding-window-beyond-context" in rules({**BASE, "sliding_window": 8192})


def test_experts_quantization_and_cache() -> None:
    moe = {**BASE, "model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 8}
    assert rules(moe)["experts-per-token-exceeds-experts"].level == "error"
    assert "quantization-config" in rules({**BASE, "quantization_config": {"quant_method": "fp8"}})
    assert "use-cache-disabled" in rules({**BASE, "use_cache": False})


def test_every_finding_has_a_fix() -> None:
    cfg = {**BASE, "num_key_value_heads": 3, "auto_map": {}, "use_cache": False, "num_hidden_layers": 60}
    for finding in analyze(cfg).findings:
        assert finding.fix and finding.message and finding.level in ("error", "warning", "info")


def test_explicit_head_size_and_post_norm_are_not_flagged() -> None:
    mt5_small = {"architectures": ["MT5ForConditionalGeneration"], "model_type": "mt5", "d_model": 512, "d_kv": 64,
                 "d_ff": 1024, "num_heads": 6, "num_layers": 8, "vocab_size": 250112, "feed_forward_proj": "gated-gelu"}
    assert "heads-divide-hidden" not in rules(mt5_small)  # 6 heads of 64 over a 512 width: valid in T5
    opt = {"architectures": ["OPTForCausalLM"], "model_type": "opt", "hidden_size": 1024, "num_attention_heads": 16,
           "num_hidden_layers": 4, "ffn_dim": 4096, "vocab_size": 50272, "max_position_embeddings": 2048,
           "word_embed_proj_dim": 512, "do_layer_norm_before": False}
    assert "no-norm-before-output" not in rules(opt)  # post-norm layers end normalised


def test_special_tokens_map_fills_in_what_the_tokenizer_config_leaves_out() -> None:
    from hubwatch.estimator import merge_special_tokens

    merged = merge_special_tokens({"pad_token": None, "eos_token": "</s>"}, {"pad_token": "<unk>", "eos_token": "x"})
    assert merged == {"pad_token": "<unk>", "eos_token": "</s>"}  # the tokenizer config wins where it names one
    assert merge_special_tokens(None, None) is None and merge_special_tokens({"a": 1}, ["junk"]) == {"a": 1}
    cfg = {k: v for k, v in BASE.items() if k != "pad_token_id"}
    assert "pad-token-missing" not in rules(cfg, tokenizer_config=merged)
