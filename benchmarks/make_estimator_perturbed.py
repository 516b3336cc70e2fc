"""Regenerates the perturbed-size truth (needs the `bench` extra): every class the zoo could build, rebuilt on
the meta device twice, once with each structural key it has moved off its default by a seeded perturbation
(layers, widths, heads and KV heads, vocabularies, expert counts) and once with tie_word_embeddings flipped.
Writes benchmarks/data/transformers_perturbed.json in the zoo's row format, so CI judges it without torch.

Run: python -m benchmarks.make_estimator_perturbed  (transformers==5.24.0, torch==2.13.0 CPU; minutes)
"""

from __future__ import annotations

import json
import random
import signal
import sys
import warnings
import zlib
from pathlib import Path
from typing import Any

from benchmarks.make_estimator_defaults import ZOO_TIMEOUT_S, count

OUT = Path(__file__).resolve().parent / "data" / "transformers_perturbed.json"
ZOO = Path(__file__).resolve().parent / "data" / "transformers_zoo.json"
SEED = 35
LAYERS = ("num_hidden_layers", "n_layer", "num_layers", "encoder_layers", "decoder_layers", "num_decoder_layers")
WIDTHS = ("intermediate_size", "encoder_ffn_dim", "decoder_ffn_dim", "d_ff", "ffn_dim", "moe_intermediate_size")
VOCABS = ("vocab_size", "entity_vocab_size", "src_vocab_size", "tgt_vocab_size", "decoder_vocab_size")
EXPERTS = ("num_experts", "num_local_experts", "n_routed_experts")
HIDDEN = ("hidden_size", "d_model", "n_embd")
HEADS = ("num_attention_heads", "n_head", "encoder_attention_heads", "decoder_attention_heads", "num_heads")


def perturb(config: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Seeded new values for the structural keys the config has (ints only; head_dim-keeping for the width)."""
    out: dict[str, Any] = {}

    def has(key: str) -> bool:
        return isinstance(config.get(key), int) and not isinstance(config.get(key), bool) and config[key] > 0

    for key in LAYERS:
        if has(key):
            n = config[key]
            out[key] = max(1, rng.choice((n // 2, n - 1, n + 1, n + 3)))
    for key in WIDTHS:
        if has(key):
            out[key] = max(8, int(config[key] * rng.choice((0.5, 0.75, 1.25))) // 8 * 8)
    for key in VOCABS:
        if has(key):
            out[key] = config[key] + rng.randint(1, 999)
    for key in EXPERTS:
        if has(key) and config[key] >= 4:
            out[key] = config[key] // 2
    heads = [k for k in HEADS if has(k)]
    hidden = [k for k in HIDDEN if has(k)]
    if hidden and heads and rng.random() < 0.5:  # twice the heads at the same head size: twice the width
        for key in hidden:
            out[key] = config[key] * 2
        for key in heads:
            out[key] = config[key] * 2
        if has("num_key_value_heads"):
            out["num_key_value_heads"] = config["num_key_value_heads"] * 2
    elif has("num_key_value_heads") and heads:
        nh, kv = config[heads[0]], config["num_key_value_heads"]
        others = [d for d in range(1, nh + 1) if nh % d == 0 and d != kv]
        if others:
            out["num_key_value_heads"] = rng.choice(others)
    return out


def main() -> int:
    warnings.filterwarnings("ignore")
    from benchmarks.bench_extra import missing_bench_extra

    if (status := missing_bench_extra("make_estimator_perturbed", "torch", "transformers")) is not None:
        return status
    import torch
    import transformers

    def alarm(signum: int, frame: Any) -> None:
        raise TimeoutError(f"building took over {ZOO_TIMEOUT_S} s")

    signal.signal(signal.SIGALRM, alarm)
    zoo = json.loads(ZOO.read_text())
    rows: list[dict[str, Any]] = []
    for base in zoo["rows"]:
        if "params" not in base or base["overrides"]:
            continue
        name = base["architecture"]
        rng = random.Random(SEED * 1_000_003 + zlib.crc32(name.encode()))
        cases = [perturb(base["config"], rng), {"tie_word_embeddings": not base["config"].get("tie_word_embeddings",
                                                                                              True)}]
        for overrides in cases:
            if not overrides:
                continue
            row: dict[str, Any] = {"architecture": name, "mapping_model_type": base["mapping_model_type"],
                                   "kind": base["kind"], "overrides": overrides}
            try:
                cls = getattr(transformers, name)
                own = getattr(cls, "config_class", None)
                cfg = own(**overrides) if own is not None and own.__name__ != "PreTrainedConfig" else \
                    transformers.AutoConfig.for_model(base["mapping_model_type"], **overrides)
                config = json.loads(cfg.to_json_string())
                config["architectures"] = [name]
                row["model_type"] = config.get("model_type", base["mapping_model_type"])
                row["config"] = config
                signal.alarm(ZOO_TIMEOUT_S)
                try:
                    with torch.device("meta"):
                        model = cls._from_config(cfg)
                finally:
                    signal.alarm(0)
                row["params"] = count(model)
                del model
            except Exception as exc:  # a perturbation this class refuses: kept as a failure, not judged
                row["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            rows.append(row)
        print(f"perturbed: {name}", file=sys.stderr)
    OUT.write_text(json.dumps({
        "source": f"generated from transformers {transformers.__version__} defaults perturbed with seed {SEED} "
                  f"(torch {torch.__version__}, meta device) by python -m benchmarks.make_estimator_perturbed",
        "transformers": transformers.__version__, "torch": torch.__version__, "seed": SEED, "rows": rows},
        indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({sum('params' in r for r in rows)} built of {len(rows)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
