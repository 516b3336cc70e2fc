"""What the estimator reports, as one digest to compare across two trees (a speed-up must keep every figure).

`python -m benchmarks.estimator_identity [OUT]` estimates every bundled config (tests/data and
benchmarks/data, duplicates once) under a spread of memory settings (each method × precision ×
training stack, and settings that reach batch search, sharding, accumulation, offloading, paged
states, LoRA targets, QLoRA's kept inputs and serving dtypes). Each record is the JSON of
`estimate_revision` from the config, from its `Analysis`, and of `memory_report` on its spec (an
error's type and message where one is raised). It prints the record count and the sha256 of all
of them; with OUT it also writes one record per line there, for `diff`. Run it in each tree with
`PYTHONPATH=/that/tree` and compare the two lines.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hubwatch.estimator import analyze, estimate_revision
from hubwatch.estimator.memory.report import memory_report
from hubwatch.estimator.memory.settings import MemorySettings

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = (ROOT / "tests" / "data", ROOT / "benchmarks" / "data" / "configs")


def configs() -> list[tuple[str, dict[str, Any]]]:
    """Every distinct JSON object with a model type or architectures under FOLDERS, by path."""
    out: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    for folder in FOLDERS:
        for path in sorted(folder.rglob("*.json")):
            try:
                data = json.loads(path.read_text("utf-8"))
            except (OSError, ValueError):
                continue
            if not isinstance(data, dict) or not ("model_type" in data or "architectures" in data):
                continue
            key = json.dumps(data, sort_keys=True)
            if key not in seen:
                seen.add(key)
                out.append((path.relative_to(ROOT).as_posix(), data))
    return out


def settings() -> list[MemorySettings]:
    out = [MemorySettings()]
    for method in ("full", "lora", "qlora", "serve"):
        for precision in ("amp-bf16", "bf16", "fp32"):
            for stack in ("hf", "torchtune", "unsloth", "litgpt", "axolotl"):
                out.append(MemorySettings(method=method, precision=precision, stack=stack))
    return out + [
        MemorySettings(batch=4, seq_len=4096),
        MemorySettings(method="full", optimizer="adamw-8bit", shards=4, grad_accumulation=4),
        MemorySettings(method="qlora", nf4_keeps_inputs=True, stack="litgpt", lora_dropout=0.1),
        MemorySettings(method="full", optimizer="sgd", grad_checkpointing=True, attention="eager"),
        MemorySettings(method="lora", lora_targets=("q_proj", "v_proj"), lora_rank=64, headroom=1.0),
        MemorySettings(method="full", optimizer_in_backward=True, stack="torchtune"),
        MemorySettings(method="serve", serve_dtype="int4", kv_dtype="fp8", batch=8),
        MemorySettings(method="lora", optimizer="paged-adamw-8bit", activation_offloading=True, stack="axolotl"),
    ]


def _json(make: Any) -> str:
    try:
        return json.dumps(make().to_json(), sort_keys=True)
    except Exception as exc:  # an error is part of what the estimator reports
        return f"error {type(exc).__name__}: {exc}"


def records() -> Iterator[str]:
    every = settings()
    for path, config in configs():
        try:
            analysis = analyze(config)
        except Exception as exc:
            yield f"{path} analyze error {type(exc).__name__}: {exc}"
            continue
        for i, s in enumerate(every):
            yield f"{path} {i} config " + _json(lambda: estimate_revision(config, s))
            yield f"{path} {i} analysis " + _json(lambda: estimate_revision(analysis, s))
            yield f"{path} {i} report " + _json(lambda: memory_report(analysis.spec, s, strict=False))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    digest = hashlib.sha256()
    count = 0
    out = open(args[0], "w", encoding="utf-8") if args else None
    try:
        for record in records():
            digest.update(record.encode() + b"\n")
            count += 1
            if out is not None:
                out.write(record + "\n")
    finally:
        if out is not None:
            out.close()
    print(f"{count} records, sha256 {digest.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
