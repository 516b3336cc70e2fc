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
    assert "deep-stack-without-depth-scaled-init" not in rules({**BASE, "num_hidden_layers": 64,
                                                                 "residual_multiplier": 0.22})


def test_pad_token_missing() -> None:
    cfg = {k: v for k, v in BASE.items() if k != "pad_token_id"}
    assert "pad-token-missing" in rules(cfg)
    assert "pad-token-missing" not in rules(cfg, tokenizer_config={"pad_token": "<pad>"})


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
