"""Bespoke decoders whose rule was read from transformers' modelling code (Doge's CDMoE switch, HRM-Text's two
stacks), against the meta-device counts of the zoo and the perturbed sweep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hubwatch.estimator import analyze

DATA = Path(__file__).parents[2] / "benchmarks" / "data"
ROWS = [r for name in ("transformers_zoo.json", "transformers_perturbed.json")
        for r in json.loads((DATA / name).read_text())["rows"] if "params" in r]


def _rows(architecture: str) -> list[dict[str, Any]]:
    rows = [r for r in ROWS if r["architecture"] == architecture]
    assert rows
    return rows


@pytest.mark.parametrize("row", _rows("HrmTextForCausalLM"), ids=lambda r: json.dumps(r["overrides"]))
def test_hrm_text_counts_two_stacks_of_the_real_depth(row: dict[str, Any]) -> None:
    a = analyze(row["config"])
    assert a.params.derived == row["params"]
    assert a.params.support.level == "modelled"


def test_doge_with_is_moe_false_has_a_dense_mlp() -> None:
    for row in _rows("DogeForCausalLM"):
        derived = analyze(row["config"]).params.derived
        assert abs(derived - row["params"]) / row["params"] < 0.01


def test_doge_cdmoe_adds_a_router_and_two_embedding_rows_per_expert() -> None:
    cfg = dict(_rows("DogeForCausalLM")[0]["config"])
    dense = analyze(cfg).params.derived
    h, n, experts = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_experts"]
    moe = analyze(dict(cfg, is_moe=True)).params.derived
    assert moe - dense == n * (2 * int(experts ** 0.5) * h + 2 * experts * h)


@pytest.mark.parametrize("row", _rows("ReformerForMaskedLM"), ids=lambda r: json.dumps(r["overrides"]))
def test_reformer_counts_lsh_and_local_layers_axial_positions_and_a_two_stream_head(row: dict[str, Any]) -> None:
    a = analyze(row["config"])
    assert a.params.derived == row["params"]
    assert a.params.support.level == "modelled"


@pytest.mark.parametrize("architecture", ["MllamaForCausalLM", "xLSTMForCausalLM", "SeamlessM4TForTextToText",
                                          "SeamlessM4Tv2ForTextToText"])
def test_tying_flipped_stays_within_one_percent(architecture: str) -> None:
    # Mllama's and xLSTM's heads never tie; Seamless *ForTextToText carries an LM head (untied: its own matrix)
    for row in _rows(architecture):
        derived = analyze(row["config"]).params.derived
        assert abs(derived - row["params"]) <= 0.01 * row["params"]


@pytest.mark.parametrize("architecture", ["FunnelForMaskedLM", "FuyuForCausalLM", "ModernVBertForMaskedLM",
                                          "GitForCausalLM", "NeoMMEForMaskedLM", "LongcatFlashForCausalLM",
                                          "ZayaForCausalLM", "T5Gemma2ForConditionalGeneration", "InklingForCausalLM",
                                          "PerceiverForMaskedLM"])
def test_bespoke_builders_match_the_meta_device_build(architecture: str) -> None:
    # exact but for T5Gemma 2 untied (one hidden-wide vector short)
    for row in _rows(architecture):
        a = analyze(row["config"])
        assert abs(a.params.derived - row["params"]) <= 1e-5 * row["params"]
        # Fuyu's language model is Persimmon, which the generic decoder reads: approximate, exact here
        assert a.params.support.level == ("approximate" if architecture == "FuyuForCausalLM" else "modelled")


def test_a_narrower_value_head_shrinks_v_and_o() -> None:
    cfg = dict(_rows("MiMoV2FlashForCausalLM")[0]["config"])
    h, nh, nkv, hd = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    n = cfg["num_hidden_layers"]
    wide = analyze(dict(cfg, v_head_dim=hd)).params.derived
    narrow = analyze(dict(cfg, v_head_dim=hd // 2)).params.derived
    assert wide - narrow == n * (h * nkv + nh * h) * (hd - hd // 2)


def test_inkling2_is_counted_as_inkling_and_says_so() -> None:
    for row in _rows("Inkling2LoopForCausalLM"):
        support = analyze(row["config"]).params.support
        assert support.level == "approximate"
        assert "counted as Inkling's text model" in support.guessed[0]
        assert "n_layers_per_attn_res_block" in support.guessed[-1]
