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
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    rows = []
    for auto, types in CASES.items():
        for mt in types:
            try:
                cfg = transformers.AutoConfig.for_model(mt)
                with torch.device("meta"):
                    model = getattr(transformers, auto).from_config(cfg)
            except Exception as exc:  # this transformers cannot build it from defaults
                print(f"skip {auto} {mt}: {type(exc).__name__}", file=sys.stderr)
                continue
            config = json.loads(cfg.to_json_string())
            config["architectures"] = [type(model).__name__]
            rows.append({"auto": auto, "model_type": mt, "architecture": type(model).__name__,
                         "params": count(model), "config": config})
    OUT.write_text(json.dumps({"transformers": transformers.__version__, "torch": torch.__version__,
                               "rows": rows}, indent=1, sort_keys=True) + "\n")
    print(f"{len(rows)} rows → {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
