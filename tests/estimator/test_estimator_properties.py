"""Hypothesis properties of the derived count: monotone in size, never negative, order-independent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hubwatch.estimator import analyze

FAMILIES = st.sampled_from(["llama", "qwen2", "gpt2", "bert", "roberta", "mistral", "gemma", "falcon", "opt",
                            "gpt_neox", "phi", "mixtral", "something_unknown"])


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    heads = draw(st.integers(1, 16))
    head_dim = draw(st.sampled_from([8, 16, 32, 64]))
    kv = draw(st.sampled_from([d for d in range(1, heads + 1) if heads % d == 0]))
    cfg: dict[str, Any] = {
        "model_type": draw(FAMILIES),
        "hidden_size": heads * head_dim,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "num_hidden_layers": draw(st.integers(1, 48)),
        "intermediate_size": draw(st.integers(1, 8192)),
        "vocab_size": draw(st.integers(1, 200_000)),
        "max_position_embeddings": draw(st.integers(1, 8192)),
        "tie_word_embeddings": draw(st.booleans()),
    }
    if cfg["model_type"] == "mixtral":
        cfg["num_local_experts"] = draw(st.integers(2, 16))
        cfg["num_experts_per_tok"] = draw(st.integers(1, cfg["num_local_experts"]))
    return cfg


# Each way of growing a config by a step k ≥ 1 (the hidden size in whole heads, the vocabulary in 600s).
GROWTH: dict[str, Callable[[dict[str, Any], int], dict[str, Any]]] = {
    "layers": lambda cfg, k: dict(cfg, num_hidden_layers=cfg["num_hidden_layers"] + k),
    "hidden size": lambda cfg, k: dict(cfg, hidden_size=cfg["hidden_size"] + cfg["num_attention_heads"] * (k % 4 + 1)),
    "vocab": lambda cfg, k: dict(cfg, vocab_size=cfg["vocab_size"] + 600 * k),
}


@pytest.mark.parametrize("grow", list(GROWTH))
@settings(max_examples=150, deadline=None)
@given(cfg=configs(), k=st.integers(1, 16))
def test_count_grows(grow: str, cfg: dict[str, Any], k: int) -> None:
    bigger = GROWTH[grow](cfg, k)
    assert analyze(bigger, seq_len=8).params.derived > analyze(cfg, seq_len=8).params.derived


@settings(max_examples=150, deadline=None)
@given(configs(), st.randoms(use_true_random=False))
def test_never_negative_and_invariant_to_key_order(cfg: dict[str, Any], rnd: Any) -> None:
    a = analyze(cfg, seq_len=8)
    keys = list(cfg)
    rnd.shuffle(keys)
    b = analyze({k: cfg[k] for k in keys}, seq_len=8)
    assert a.params.derived > 0 and 0 < a.params.active <= a.params.derived
    assert all(v >= 0 for v in a.params.by_component.values())
    assert a.to_json() == b.to_json()
