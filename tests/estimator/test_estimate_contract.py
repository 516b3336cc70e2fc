"""The typed Estimate: made by the estimator, round-tripped through the JSON the store keeps."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from memory_spec_builders import llama_like

from hubwatch.estimator import Estimate, Finding, MemorySettings, analyze, estimate_revision
from hubwatch.estimator.estimate import Memory
from hubwatch.estimator.estimate_parts import (
    CARD_METHODS, CardFit, Cost, MethodError, MethodMemory, Params, PeakMemory, StructureSummary,
)

METHODS = [m for m, _ in CARD_METHODS]
names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
gb = st.floats(min_value=0, max_value=1e4, allow_nan=False)
counts = st.integers(min_value=0, max_value=10**12)
maybe_count = st.none() | counts
figures = st.lists(st.tuples(names, gb), max_size=4, unique_by=lambda t: t[0]).map(tuple)


@st.composite
def method_memory(draw: st.DrawFn, method: str) -> MethodMemory | MethodError:
    if draw(st.booleans()):
        return MethodError(method, draw(names))
    return MethodMemory(method, draw(st.integers(1, 10**6)), draw(st.integers(1, 4096)), draw(gb), draw(gb),
                        draw(figures), draw(names), draw(figures), draw(counts), draw(gb), draw(gb))


@st.composite
def estimates(draw: st.DrawFn) -> Estimate:
    if draw(st.integers(0, 9)) == 0:
        return Estimate.failed(draw(st.none() | names), draw(names))
    memory = None
    if draw(st.booleans()):
        settings = MemorySettings(method=draw(st.sampled_from(METHODS)), batch=draw(st.integers(1, 64)),
                                  seq_len=draw(st.integers(1, 10**5)))
        memory = Memory(settings, PeakMemory(*(draw(st.none() | gb) for _ in PeakMemory.KEYS)),
                        tuple(draw(method_memory(m)) for m in METHODS))
    cards = tuple(CardFit(draw(names), draw(st.none() | gb), tuple((m, draw(st.none() | st.integers(0, 4096)))
                                                                   for m in METHODS),
                          tuple((m, draw(maybe_count)) for m in METHODS if draw(st.booleans())))
                  for _ in range(draw(st.integers(0, 3))))
    cost = draw(st.none() | st.builds(Cost, names, names, st.integers(1, 64), gb, gb, gb, st.none() | gb,
                                      st.none() | gb, names, gb, gb, st.integers(1, 10**6)))
    analysed = draw(st.booleans())
    return Estimate(
        draw(st.none() | names),
        params=Params(draw(maybe_count), draw(maybe_count), draw(st.none() | gb), draw(maybe_count),
                      draw(figures.map(lambda f: tuple((k, int(v)) for k, v in f))), draw(names)) if analysed else None,
        memory=memory, cards=cards if memory else (), cost=cost if memory else None,
        findings=tuple(draw(st.lists(st.builds(Finding, names, st.sampled_from(["error", "warning", "info"]), names,
                                               names), max_size=3))) if analysed else (),
        assumptions=tuple(draw(st.lists(names, max_size=3))) if memory else (),
        model=draw(st.none() | names) if analysed else None, revision=draw(st.none() | names) if analysed else None,
        family=draw(st.none() | names) if analysed else None,
        custom_code=draw(st.none() | st.booleans()) if analysed else None,
        structure=draw(st.none() | st.builds(StructureSummary, maybe_count, st.none() | st.booleans(),
                                             st.lists(names, max_size=2).map(tuple))),
        notes=tuple(draw(st.lists(names, max_size=2))) if analysed else (),
    )


@given(estimates())
def test_every_estimate_round_trips_through_its_stored_json(estimate: Estimate) -> None:
    stored = json.loads(json.dumps(estimate.to_json()))
    assert Estimate.from_json(stored) == estimate
    assert Estimate.from_json(stored).to_json() == stored  # type: ignore[union-attr]


def test_a_real_estimate_round_trips_and_keeps_the_stored_shape(data_dir: Path) -> None:
    config = json.loads((data_dir / "configs" / "meta-llama__Llama-3.2-1B-Instruct" / "config.json").read_text())
    estimate = estimate_revision(analyze(config))
    stored = json.loads(json.dumps(estimate.to_json()))
    assert Estimate.from_json(stored) == estimate and Estimate.from_json(stored).to_json() == stored  # type: ignore[union-attr]
    assert list(stored)[:9] == ["model", "revision", "family", "custom_code", "params", "findings", "notes",
                                "estimator_version", "structure"]
    assert {"settings", "memory_gb", "selected", "methods", "cards", "cost", "assumptions"} <= set(stored)
    # typed reads: no key paths
    assert estimate.params is not None and estimate.params.derived == analyze(config).params.derived
    assert estimate.memory is not None and estimate.memory.settings is not None
    assert estimate.memory.settings.seq_len == 2048  # the resolved length, as stored
    selected = estimate.memory.selected
    assert isinstance(selected, MethodMemory) and selected.method == "lora"
    assert abs(sum(v for _, v in selected.terms) - selected.peak_gb) < 0.01
    t4 = next(c for c in estimate.cards if c.name == "T4")
    assert t4.batch("serve") and t4.label == "T4 16 GB"
    assert estimate.cost is not None and estimate.cost.method == "lora"


def test_a_method_the_model_cannot_run_is_a_typed_error() -> None:
    estimate = estimate_revision(llama_like(layers=2), MemorySettings(lora_targets=("wpe",)))
    assert estimate.memory is not None and estimate.params is None  # a bare spec: memory parts only
    assert isinstance(estimate.memory.selected, MethodError) and "wpe" in estimate.memory.selected.error
    assert estimate.memory.peaks.lora is None and estimate.cost is None
    assert all(card.batch("lora") is None for card in estimate.cards)


def test_stored_errors_and_odd_values_read_without_raising() -> None:
    failed = Estimate.from_json({"error": "config.hidden_size: missing"})
    assert failed is not None and failed.error == "config.hidden_size: missing" and failed.memory is None
    assert Estimate.from_json(None) is None
    odd = Estimate.from_json({"params": [1], "settings": {"no_such_setting": 1}, "memory_gb": {"lora": "big"},
                              "methods": {"lora": {"peak_gb": 1}}, "cards": "x", "cost": {"hours": 1}})
    assert odd is not None and odd.params is None and odd.memory is not None and odd.memory.settings is None
    assert odd.memory.peaks == PeakMemory() and odd.memory.methods == () and odd.cards == () and odd.cost is None
