"""Estimator settings of a measured row whose `settings` column states them (stacks other than LitGPT).

`benchmarks/data/measured_memory.tsv` rows of torchtune (and any later stack) carry the run's recipe in
the estimator's own vocabulary: `key=value` pairs separated by `;`, read from the recipe config and
the table's stated overrides (sources in the row). Keys are `MemorySettings` fields (`optimizer`,
`loss`, `grad_checkpointing`, `activation_offloading`, `optimizer_in_backward`, `lora_targets` with
`+` between names, `nf4_double_quant`, `shards`, `compile` — the estimator models torch.compile's
loss, not the compiled layers' own fusions, so a compiled row's error shows what those save). A
row with an empty `settings` column has settings its source does not state and is skipped;
`skip=<reason>` keeps a published row the estimator cannot model (the reason is reported).
"""

from __future__ import annotations

import re

from hubwatch.estimator.memory.settings import MemorySettings

__all__ = ["UNMODELLED_KEYS", "stated_settings"]

UNMODELLED_KEYS: tuple[str, ...] = ()
_BOOL_KEYS = ("grad_checkpointing", "activation_offloading", "optimizer_in_backward", "nf4_double_quant", "compile")
_TEXT_KEYS = ("optimizer", "loss")
_INT_KEYS = ("shards",)


def _pairs(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in text.split(";"):
        if part.strip():
            key, _, value = part.partition("=")
            out[key.strip()] = value.strip()
    return out


def stated_settings(row: dict[str, str]) -> MemorySettings | str:
    """The settings a row's `settings` column states, or why the row cannot be estimated."""
    stated = _pairs(row.get("settings") or "")
    if not stated:
        return "settings unstated by the source (the row is kept as published)"
    if "skip" in stated:  # a row kept as published whose run the estimator cannot model
        return stated["skip"]
    seq = re.search(r"(\d+)", row["seq_len"])
    if "not packed" in row["seq_len"]:
        return "sequence length unstated (unpacked data: the longest batch is not published)"
    if not row["batch"].isdigit() or seq is None:
        return "batch or sequence length unstated"
    method = row["method"]
    values: dict[str, object] = {
        "method": method, "batch": int(row["batch"]), "seq_len": int(seq.group(1)), "precision": "bf16",
        "lora_rank": int(row["lora_r"]) if row["lora_r"].isdigit() else 16, "stack": row["stack"],
    }
    for key, value in stated.items():
        if key in UNMODELLED_KEYS:
            continue
        if key in _BOOL_KEYS:
            values[key] = value == "true"
        elif key in _TEXT_KEYS:
            values[key] = value
        elif key in _INT_KEYS:
            values[key] = int(value)
        elif key == "lora_targets":
            values[key] = [t for t in value.split("+") if t]
        else:
            return f"settings key {key!r} not mapped"
    return MemorySettings.from_json(values)
