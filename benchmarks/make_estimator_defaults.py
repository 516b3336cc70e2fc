"""Regenerates the transformers truth the estimator is judged on (needs the `bench` extra):

- tests/estimator/transformers_defaults.json: a default config per model type and auto class, plus
  non-default sizes (OVERRIDES), with the parameter count of the class built from it on the meta device;
- benchmarks/data/transformers_zoo.json: the zoo — every class in transformers' causal-LM, masked-LM and
  seq2seq-LM auto mappings built from its default config on the meta device (ZOO_OVERRIDES add a few
  non-default sizes), with each config class's `attribute_map` (the alias test reads them).

Run: python -m benchmarks.make_estimator_defaults  (transformers==5.24.0, torch==2.13.0 CPU; minutes)
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "tests" / "estimator" / "transformers_defaults.json"
ZOO_OUT = Path(__file__).resolve().parent / "data" / "transformers_zoo.json"
# The auto mappings whose classes make the zoo, and the head kind each names.
ZOO_MAPPINGS = (("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "causal-lm"), ("MODEL_FOR_MASKED_LM_MAPPING_NAMES", "masked-lm"),
                ("MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES", "seq2seq-lm"))
# Non-default sizes for zoo mechanisms the defaults fix at one setting: (class, overrides).
ZOO_OVERRIDES: list[tuple[str, dict[str, Any]]] = [
    ("Qwen3NextForCausalLM", {"num_hidden_layers": 8, "hidden_size": 1024, "num_experts": 16}),
    ("Qwen3MoeForCausalLM", {"mlp_only_layers": [0, 1], "num_hidden_layers": 6}),
    ("DeepseekV3ForCausalLM", {"first_k_dense_replace": 2, "num_hidden_layers": 5, "n_routed_experts": 16}),
    ("LlamaForCausalLM", {"hidden_size": 2048, "num_hidden_layers": 6, "num_key_value_heads": 8,
                          "tie_word_embeddings": True}),
    ("BertForMaskedLM", {"hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 6,
                         "intermediate_size": 1536}),
    ("T5ForConditionalGeneration", {"d_model": 256, "num_layers": 3, "num_decoder_layers": 5}),
    ("MixtralForCausalLM", {"num_local_experts": 4, "num_hidden_layers": 4}),
    ("Gemma3ForCausalLM", {"num_hidden_layers": 6, "sliding_window_pattern": 3}),
    ("Qwen3_5ForCausalLM", {"num_hidden_layers": 8, "linear_num_key_heads": 8, "linear_num_value_heads": 16,
                            "linear_value_head_dim": 64, "hidden_size": 1024}),
    ("KimiLinearForCausalLM", {"num_hidden_layers": 6, "linear_num_heads": 16, "num_experts": 16,
                               "hidden_size": 1024}),
    ("Gemma4ForCausalLM", {"num_hidden_layers": 6, "hidden_size_per_layer_input": 128, "hidden_size": 1024}),
    ("SwitchTransformersForConditionalGeneration", {"num_experts": 4, "encoder_sparse_step": 2,
                                                    "decoder_sparse_step": 3}),
    ("NllbMoeForConditionalGeneration", {"num_experts": 8, "encoder_sparse_step": 2, "d_model": 512}),
    ("OlmoHybridForCausalLM", {"num_hidden_layers": 4, "hidden_size": 1024, "num_attention_heads": 8,
                               "num_key_value_heads": 8}),
    ("RwkvForCausalLM", {"hidden_size": 512, "attention_hidden_size": 384, "num_hidden_layers": 3,
                         "intermediate_size": 1000, "tie_word_embeddings": True}),
    ("CpmAntForCausalLM", {"hidden_size": 1024, "dim_head": 96, "num_attention_heads": 8, "num_hidden_layers": 3,
                           "dim_ff": 2000, "prompt_length": 5, "prompt_types": 3, "segment_types": 7}),
    ("ProphetNetForConditionalGeneration", {"hidden_size": 256, "num_encoder_layers": 2, "num_decoder_layers": 3,
                                            "num_decoder_attention_heads": 8, "ngram": 3, "num_buckets": 20,
                                            "tie_word_embeddings": False}),
    ("GlmAsrForConditionalGeneration", {"audio_config": {"hidden_size": 256, "num_attention_heads": 8,
                                                         "num_key_value_heads": 2, "intermediate_size": 1024,
                                                         "num_hidden_layers": 2}}),
    ("GraniteSpeechForConditionalGeneration", {"window_size": 12, "downsample_rate": 3, "encoder_config": {
        "hidden_dim": 256, "num_layers": 2, "num_heads": 4, "dim_head": 48, "context_size": 50, "max_pos_emb": 100},
        "projector_config": {"hidden_size": 128, "num_hidden_layers": 5, "num_attention_heads": 4,
                             "encoder_hidden_size": 256, "cross_attention_frequency": 3}}),
    ("GotOcr2ForConditionalGeneration", {"vision_config": {"hidden_size": 256, "num_attention_heads": 4,
                                                           "num_hidden_layers": 4, "global_attn_indexes": [1, 3],
                                                           "window_size": 7, "image_size": 512,
                                                           "output_channels": 64}}),
    ("SqueezeBertForMaskedLM", {"hidden_size": 256, "embedding_size": 256, "num_hidden_layers": 3,
                                "num_attention_heads": 4, "intermediate_size": 1024, "q_groups": 2, "k_groups": 8,
                                "post_attention_groups": 4, "output_groups": 16}),
    ("MobileBertForMaskedLM", {"hidden_size": 256, "embedding_size": 64, "num_hidden_layers": 3,
                               "intra_bottleneck_size": 96, "key_query_shared_bottleneck": False,
                               "num_feedforward_networks": 2, "trigram_input": False, "tie_word_embeddings": False}),
    ("BigBirdPegasusForCausalLM", {"d_model": 256, "decoder_layers": 3, "decoder_attention_heads": 8,
                                   "decoder_ffn_dim": 700, "use_bias": True}),
    ("Gemma3nForCausalLM", {"hidden_size": 1024, "num_hidden_layers": 10, "num_attention_heads": 4,
                            "num_key_value_heads": 1, "intermediate_size": [4096] * 4 + [2048] * 3 + [8192] * 3,
                            "num_kv_shared_layers": 3, "laurel_rank": 32, "altup_num_inputs": 3,
                            "hidden_size_per_layer_input": 128, "vocab_size_per_layer_input": 32000}),
    ("Zamba2ForCausalLM", {"hidden_size": 512, "num_hidden_layers": 8, "num_attention_heads": 8, "num_key_value_heads": 4,
                           "intermediate_size": 1536, "n_mamba_heads": 4, "mamba_d_state": 32, "mamba_ngroups": 2,
                           "num_mem_blocks": 2, "adapter_rank": 16, "use_shared_attention_adapter": True,
                           "add_bias_linear": True, "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid",
                                                                          "hybrid", "mamba", "mamba", "hybrid"]}),
]
ZOO_TIMEOUT_S = 120

CASES: dict[str, list[str]] = {
    "AutoModelForCausalLM": [
        "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2", "gemma3_text",
        "phi", "phi3", "phimoe", "gpt2", "gpt_bigcode", "gpt_neox", "gptj", "codegen", "gpt_neo", "opt", "bloom",
        "falcon", "mpt", "stablelm", "starcoder2", "olmo", "olmo2", "olmoe", "cohere", "cohere2", "granite",
        "granitemoe", "granitemoeshared", "deepseek_v2", "deepseek_v3", "gpt_oss", "lfm2", "smollm3", "ernie4_5",
        "llama4_text", "vaultgemma", "mamba", "jamba", "mamba2", "falcon_h1", "zamba", "recurrent_gemma", "bitnet",
        "bamba", "granitemoehybrid", "nemotron_h",
    ],
    "AutoModelForMaskedLM": ["bert", "roberta", "xlm-roberta", "distilbert", "albert", "electra", "deberta",
                             "deberta-v2", "camembert", "mpnet", "modernbert", "ernie"],
    "AutoModelForSequenceClassification": ["bert", "roberta", "deberta-v2", "distilbert", "llama", "qwen2",
                                           "modernbert", "electra", "xlm-roberta", "albert", "bart", "gpt2"],
    "AutoModelForTokenClassification": ["bert", "roberta", "distilbert", "deberta-v2"],
    "AutoModelForQuestionAnswering": ["bert", "roberta", "distilbert", "albert"],
    "AutoModelForSeq2SeqLM": ["t5", "mt5", "umt5", "bart", "mbart", "pegasus", "marian", "m2m_100", "blenderbot",
                              "plbart"],
    "AutoModelForSpeechSeq2Seq": ["whisper"],
    "AutoModelForCTC": ["wav2vec2", "hubert"],
    "AutoModelForAudioClassification": ["wav2vec2", "hubert"],
    "AutoModelForImageClassification": ["vit", "dinov2", "beit"],
    "AutoModel": ["clip", "siglip", "vit", "bert", "siglip_vision_model", "clip_vision_model", "clip_text_model",
                  "t5", "bart", "whisper", "gpt2", "llama", "distilbert", "dpr"],
    "AutoModelForImageTextToText": ["llava", "llava_next", "idefics3", "paligemma", "gemma3", "smolvlm", "qwen2_vl",
                                    "qwen2_5_vl", "llava_onevision", "mistral3", "internvl", "llama4", "mllama",
                                    "qwen3_vl"],
}

# Non-default settings whose mechanisms the defaults above do not exercise: (model type, auto class, overrides).
OVERRIDES: list[tuple[str, str, dict[str, Any]]] = [
    ("opt", "AutoModelForCausalLM", {"hidden_size": 1024, "word_embed_proj_dim": 512, "num_attention_heads": 16}),
    ("opt", "AutoModelForCausalLM", {"do_layer_norm_before": False}),
    ("falcon", "AutoModelForCausalLM", {"alibi": True, "bias": True, "multi_query": False, "parallel_attn": False,
                                        "hidden_size": 2048, "num_attention_heads": 32, "num_hidden_layers": 4}),
    ("falcon", "AutoModelForCausalLM", {"new_decoder_architecture": True, "num_kv_heads": 8, "hidden_size": 8192,
                                        "num_attention_heads": 128, "num_hidden_layers": 2}),
    ("gpt_neox", "AutoModelForCausalLM", {"use_parallel_residual": False, "tie_word_embeddings": True}),
    ("mistral", "AutoModelForCausalLM", {"sliding_window": 4096, "head_dim": 128, "hidden_size": 5120}),
    ("qwen2", "AutoModelForSequenceClassification", {"num_labels": 5}),
    ("llama", "AutoModelForTokenClassification", {"num_labels": 7, "num_hidden_layers": 2}),
    ("t5", "AutoModelForSeq2SeqLM", {"feed_forward_proj": "gated-gelu", "tie_word_embeddings": False,
                                     "num_decoder_layers": 3}),
    ("bart", "AutoModelForSequenceClassification", {"num_labels": 3}),
    ("bart", "AutoModelForQuestionAnswering", {}),
    ("stablelm", "AutoModelForCausalLM", {"use_parallel_residual": True, "qk_layernorm": True, "use_qkv_bias": True}),
    ("phi", "AutoModelForCausalLM", {"qk_layernorm": True}),
    ("gpt_bigcode", "AutoModelForCausalLM", {"multi_query": False}),
    ("deepseek_v2", "AutoModelForCausalLM", {"q_lora_rank": None, "num_hidden_layers": 4}),
    ("qwen2_moe", "AutoModelForCausalLM", {"mlp_only_layers": [0, 2], "decoder_sparse_step": 2, "num_hidden_layers": 6}),
    ("electra", "AutoModelForPreTraining", {}),
    ("bert", "AutoModelForPreTraining", {}),
    ("bert", "AutoModelForMultipleChoice", {}),
    ("roberta", "AutoModelForMultipleChoice", {}),
    ("deberta-v2", "AutoModelForSequenceClassification", {"num_labels": 3}),
    ("cohere", "AutoModelForCausalLM", {"use_qk_norm": True, "num_hidden_layers": 2}),
]


def count(model: Any) -> int:
    seen: set[int] = set()
    total = 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return total


def _zoo(torch: Any, transformers: Any) -> dict[str, Any]:
    """Every class of the zoo mappings built on the meta device from its default config (or the failure)."""
    import signal

    from transformers.models.auto import modeling_auto

    def alarm(signum: int, frame: Any) -> None:
        raise TimeoutError(f"building took over {ZOO_TIMEOUT_S} s")

    signal.signal(signal.SIGALRM, alarm)
    classes: dict[str, tuple[str, str]] = {}
    for mapping, kind in ZOO_MAPPINGS:
        for mt, cls_name in getattr(modeling_auto, mapping).items():
            for name in (cls_name,) if isinstance(cls_name, str) else cls_name:
                classes.setdefault(name, (mt, kind))
    cases: list[tuple[str, str, str, dict[str, Any]]] = [(name, mt, kind, {}) for name, (mt, kind) in
                                                         sorted(classes.items())]
    cases += [(name, classes[name][0], classes[name][1], o) for name, o in ZOO_OVERRIDES if name in classes]
    rows: list[dict[str, Any]] = []
    attribute_maps: dict[str, dict[str, str]] = {}
    for name, mt, kind, overrides in cases:
        row: dict[str, Any] = {"architecture": name, "mapping_model_type": mt, "kind": kind, "overrides": overrides}
        try:
            cls = getattr(transformers, name)
            own = getattr(cls, "config_class", None)  # e.g. Qwen3_5ForCausalLM reads the text config
            cfg = own(**overrides) if own is not None and own.__name__ != "PreTrainedConfig" else \
                transformers.AutoConfig.for_model(mt, **overrides)
            for sub in [cfg] + [getattr(cfg, k) for k in getattr(cfg, "sub_configs", {}) if getattr(cfg, k, None)]:
                amap = getattr(type(sub), "attribute_map", {})
                if amap:
                    attribute_maps[type(sub).__name__] = dict(amap)
            config = json.loads(cfg.to_json_string())
            config["architectures"] = [name]
            row["model_type"] = config.get("model_type", mt)
            row["config"] = config
            row["text"] = not any(k in config for k in ("vision_config", "audio_config", "speech_config"))
            signal.alarm(ZOO_TIMEOUT_S)
            try:
                with torch.device("meta"):
                    model = cls._from_config(cfg)
            finally:
                signal.alarm(0)
            row["params"] = count(model)
            del model
        except Exception as exc:  # this transformers cannot build the class from its defaults: kept, as a failure
            row["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            print(f"zoo: {name} not built ({row['error'][:100]})", file=sys.stderr)
        rows.append(row)
    return {"source": f"generated from transformers {transformers.__version__} defaults (torch {torch.__version__}, "
                      "meta device) by python -m benchmarks.make_estimator_defaults",
            "transformers": transformers.__version__, "torch": torch.__version__, "rows": rows,
            "attribute_maps": dict(sorted(attribute_maps.items()))}


def main() -> int:
    warnings.filterwarnings("ignore")
    from benchmarks.bench_extra import missing_bench_extra

    if (status := missing_bench_extra("make_estimator_defaults", "torch", "transformers")) is not None:
        return status
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    rows = []
    cases: list[tuple[str, str, dict[str, Any]]] = [(mt, auto, {}) for auto, types in CASES.items()
                                                    for mt in types] + OVERRIDES
    for mt, auto, overrides in cases:
        try:
            cfg = transformers.AutoConfig.for_model(mt, **overrides)
            with torch.device("meta"):
                model = getattr(transformers, auto).from_config(cfg)
        except Exception as exc:  # this transformers cannot build it from defaults
            print(f"skip {auto} {mt}: {type(exc).__name__}", file=sys.stderr)
            continue
        config = json.loads(cfg.to_json_string())
        config["architectures"] = [type(model).__name__]
        rows.append({"auto": auto, "model_type": mt, "architecture": type(model).__name__,
                     "overrides": overrides, "params": count(model), "config": config})
    OUT.write_text(json.dumps({"transformers": transformers.__version__, "torch": torch.__version__,
                               "rows": rows}, indent=1, sort_keys=True) + "\n")
    print(f"{len(rows)} rows → {OUT}")
    if "--no-zoo" not in sys.argv:
        zoo = _zoo(torch, transformers)
        ZOO_OUT.write_text(json.dumps(zoo, indent=None, sort_keys=True, separators=(",", ":")) + "\n")
        print(f"{len(zoo['rows'])} zoo classes → {ZOO_OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
