"""Zamba and RecurrentGemma (Griffin): exact counts against transformers' own builds of their default configs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hubwatch.estimator import analyze

DEFAULTS = Path(__file__).resolve().parent / "transformers_defaults.json"


def default_row(model_type: str) -> dict[str, Any]:
    rows = json.loads(DEFAULTS.read_text())["rows"]
    (row,) = [r for r in rows if r["model_type"] == model_type and not r.get("overrides")]
    return row


@pytest.mark.parametrize("model_type", ["zamba", "recurrent_gemma"])
def test_default_config_counts_exactly(model_type: str) -> None:
    row = default_row(model_type)
    analysis = analyze(row["config"])
    assert analysis.params.derived == row["params"]  # built on the meta device by transformers
    assert not any("unknown architecture" in note for note in analysis.notes)
    assert analysis.structure.forward_pass_ok


def test_zamba_shares_one_attention_block() -> None:
    cfg = default_row("zamba")["config"]
    analysis = analyze(cfg)
    kinds = analysis.spec.stacks[0].attention.layer_types
    assert kinds.count("full") == cfg["layers_block_type"].count("hybrid") == 13  # KV cache only where attention runs
    listed = dict(cfg)
    del listed["layers_block_type"]  # transformers' period rule gives the same layers
    assert analyze(listed).params.derived == analysis.params.derived
    # one more hybrid layer adds its own linear and a Mamba layer, not another attention block
    h = cfg["hidden_size"]
    longer = analyze({**cfg, "layers_block_type": [*cfg["layers_block_type"], "hybrid"], "num_hidden_layers": 77})
    per_mamba_layer = (analysis.params.by_component["ssm"] + 76 * h) // 76  # mixer and its norm
    assert longer.params.derived - analysis.params.derived == per_mamba_layer + h * h


def test_recurrent_gemma_cycles_block_types() -> None:
    cfg = default_row("recurrent_gemma")["config"]
    spec = analyze(cfg).spec.stacks[0].attention
    assert spec.layer_types.count("sliding") == 8 and spec.layer_types.count("none") == 18
    assert spec.sliding_window == cfg["attention_window_size"]
    all_attention = analyze({**cfg, "block_types": ["attention"]})
    assert all_attention.spec.stacks[0].attention.layer_types.count("sliding") == 26
