"""Regenerates tests/estimator/transformers_defaults.json: transformers' default config per model type and
the parameter count of the class built from it on the meta device (needs the `bench` extra).

Run: python -m benchmarks.make_estimator_defaults
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "tests" / "estimator" / "transformers_defaults.json"

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


def main() -> int:
    warnings.filterwarnings("ignore")
    from benchmarks.bench_extra import missing_bench_extra

    if (status := missing_bench_extra("make_estimator_defaults", "torch", "transformers")) is not None:
        return status
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    rows = []
    cases = [(mt, auto, {}) for auto, types in CASES.items() for mt in types] + OVERRIDES
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
