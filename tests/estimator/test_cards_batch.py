"""The largest batch per card, solved from the memory terms, equals the searched answer exactly.

Two oracles kept here (not in the package): the search `max_batch` ran before it took a memory
model (`estimate_memory` at batches 1 and 2, then at the solution and its neighbours, for every
card), and a plain bisection over `estimate_memory` that assumes nothing but monotonicity.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings as hsettings, strategies as st
from memory_spec_builders import llama_like
from test_memory_properties import specs

from hubwatch.estimator.cards import (
    BATCH_CAP, DEFAULT_CARDS, Card, cards_needed, cards_needed_many, fits, max_batch, max_batch_of,
)
from hubwatch.estimator.memory.peak import estimate_memory, memory_model
from hubwatch.estimator.memory.report import memory_report
from hubwatch.estimator.memory.settings import MemorySettings
from hubwatch.estimator.params.spec import ModelSpec

METHODS = ("full", "lora", "qlora", "serve")


def old_max_batch(spec: ModelSpec, settings: MemorySettings, method: str, card: Card, cap: int = BATCH_CAP) -> int:
    """`cards.max_batch` as it was: every figure from `estimate_memory`."""

    def ok(batch: int) -> bool:
        return fits(estimate_memory(spec, settings.with_(batch=batch), method), card)

    one = estimate_memory(spec, settings.with_(batch=1), method)
    if not fits(one, card):
        return 0
    two = dict(estimate_memory(spec, settings.with_(batch=2), method).moments)
    limit = (card.memory_bytes - one.framework_overhead_bytes) / one.headroom
    best = float(cap)
    for name, t1 in one.moments:
        k = two[name] - t1
        if k > 0:
            best = min(best, (limit - (t1 - k)) / k)
    batch = max(1, min(cap, int(best)))
    while batch > 1 and not ok(batch):
        batch -= 1
    while batch < cap and ok(batch + 1):
        batch += 1
    return batch


def bisected_max_batch(spec: ModelSpec, settings: MemorySettings, method: str, card: Card, cap: int = BATCH_CAP) -> int:
    """The largest batch in [1, cap] that fits, by bisection on `estimate_memory` (0 if none)."""

    def ok(batch: int) -> bool:
        return fits(estimate_memory(spec, settings.with_(batch=batch), method), card)

    if not ok(1):
        return 0
    low, high = 1, cap  # ok(low); the answer is in [low, high]
    while low < high:
        mid = (low + high + 1) // 2
        if ok(mid):
            low = mid
        else:
            high = mid - 1
    return low


wide_settings = st.builds(
    MemorySettings,
    batch=st.integers(1, 64),
    seq_len=st.integers(1, 32_768),
    lora_rank=st.integers(1, 64),
    lora_targets=st.sampled_from([("all-linear",), ("q_proj", "v_proj"), ("attn",), ("mlp",)]),
    precision=st.sampled_from(["amp-bf16", "bf16", "fp32"]),
    optimizer=st.sampled_from(["adamw", "adamw-8bit", "sgd"]),
    grad_checkpointing=st.booleans(),
    attention=st.sampled_from(["sdpa", "eager"]),
    loss=st.sampled_from(["fp32", "chunked"]),
    serve_dtype=st.sampled_from(["bf16", "int8", "int4"]),
    implementation=st.sampled_from(["transformers", "litgpt"]),
    shards=st.sampled_from([1, 1, 2, 8]),
    grad_accumulation=st.sampled_from([1, 1, 4]),
    headroom=st.floats(1.0, 2.0),
    framework_overhead_gb=st.floats(0.0, 4.0),
    nf4_keeps_inputs=st.booleans(),
)
cards = st.sampled_from(DEFAULT_CARDS) | st.builds(
    Card, name=st.just("X"), memory_gb=st.floats(0.01, 100_000), bf16_tflops=st.just(0.0), usd_per_hour=st.just(0.0))


@hsettings(max_examples=400, deadline=None)
@given(specs(), wide_settings, st.sampled_from(METHODS), cards, st.sampled_from([BATCH_CAP, 1, 2, 37]))
def test_solved_batch_equals_the_search(dims: dict[str, Any], s: MemorySettings, method: str, card: Card, cap: int) -> None:
    spec = llama_like(**dims)
    solved = max_batch(spec, s, method, card, cap)
    assert solved == old_max_batch(spec, s, method, card, cap) == bisected_max_batch(spec, s, method, card, cap)
    assert max_batch_of(memory_model(spec, s, method), card, cap) == solved


@hsettings(max_examples=200, deadline=None)
@given(specs(), wide_settings, st.sampled_from(METHODS), st.integers(1, 5000))
def test_model_at_a_batch_is_the_estimate_at_that_batch(dims: dict[str, Any], s: MemorySettings, method: str,
                                                        batch: int) -> None:
    spec = llama_like(**dims)
    assert memory_model(spec, s, method).at(batch) == estimate_memory(spec, s.with_(batch=batch), method)


@hsettings(max_examples=60, deadline=None)
@given(specs(), wide_settings)
def test_report_batches_equal_the_search_for_every_card(dims: dict[str, Any], s: MemorySettings) -> None:
    spec = llama_like(**dims)
    report = memory_report(spec, s, strict=False)
    for fit in report.cards:
        card = next(c for c in DEFAULT_CARDS if c.name == fit.name)
        for method, batch in fit.batches:
            if batch is not None:
                assert batch == old_max_batch(spec, s, method, card)


def scanned_cards_needed(estimate: Any, card: Card, max_cards: int = 1024) -> int | None:
    """`cards.cards_needed` as it was: every count tried in order."""
    if fits(estimate, card):
        return 1
    logits = estimate.term("logits")
    splittable = estimate.peak_bytes - logits
    per_card = card.memory_bytes - estimate.framework_overhead_bytes - logits * estimate.headroom
    if per_card <= 0:
        return None
    n = 2
    while n <= max_cards:
        if (splittable / n) * estimate.headroom <= per_card:
            return n
        n += 1 if n < 16 else n // 4
    return None


@hsettings(max_examples=300, deadline=None)
@given(specs(), wide_settings, st.sampled_from(METHODS), cards, st.sampled_from([1024, 1, 2, 16, 17, 100]))
def test_cards_needed_equals_the_scan(dims: dict[str, Any], s: MemorySettings, method: str, card: Card,
                                      max_cards: int) -> None:
    estimate = estimate_memory(llama_like(**dims), s, method)
    assert cards_needed(estimate, card, max_cards) == scanned_cards_needed(estimate, card, max_cards)
    others = [card] + [c for c in DEFAULT_CARDS if c.memory_gb != card.memory_gb][:3]
    assert cards_needed_many(estimate, tuple(c.memory_bytes for c in others), max_cards) == \
        [scanned_cards_needed(estimate, c, max_cards) for c in others]
