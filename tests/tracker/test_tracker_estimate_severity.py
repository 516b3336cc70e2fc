"""The estimate change's severity comes from the typed delta (cards lost or gained), never from its text."""

from __future__ import annotations

from dataclasses import replace

from hubwatch.domain.records import Kind, Severity
from hubwatch.estimator import Estimate, MemorySettings, estimate_delta
from hubwatch.estimator.estimate import Memory
from hubwatch.estimator.estimate_parts import CardFit, Params, PeakMemory
from hubwatch.tracker.estimating import estimate_change

SETTINGS = MemorySettings(seq_len=2048)


def estimate(lora_gb: float, l4_lora_batch: int, derived: int = 1000) -> Estimate:
    return Estimate("1.1.0", params=Params(derived), memory=Memory(SETTINGS, PeakMemory(lora=lora_gb)),
                    cards=(CardFit("L4", 24, (("full", 0), ("lora", l4_lora_batch), ("qlora", 4), ("serve", 9))),))


def test_a_card_that_no_longer_fits_is_medium() -> None:
    old, new = estimate(20.0, 1), estimate(26.0, 0)
    delta = estimate_delta(old, new)
    assert delta.lost_cards == ("lora: L4 24 GB",) and delta.gained_cards == ()
    change = estimate_change(old, new)
    assert change is not None and change.severity is Severity.MEDIUM and change.kind is Kind.CONFIG
    assert change.summary == "estimate moved: LoRA r=16 at 2048 tokens: 20.0 → 26.0 GB; no longer fits L4 24 GB"
    back = estimate_change(new, old)
    assert back is not None and back.severity is Severity.MEDIUM and "now fits L4 24 GB" in back.summary


def test_memory_that_moved_without_changing_a_fit_is_low() -> None:
    change = estimate_change(estimate(10.0, 3), estimate(12.0, 2))
    assert change is not None and change.severity is Severity.LOW
    assert estimate_delta(estimate(10.0, 3), estimate(12.0, 2)).lost_cards == ()


def test_severity_does_not_read_the_text() -> None:
    # A card whose name reads like the summary's words changes nothing: only the typed fields count.
    old = replace(estimate(10.0, 3), cards=(CardFit("no longer fits", 24, (("lora", 3),)),))
    new = replace(estimate(12.0, 2), cards=(CardFit("no longer fits", 24, (("lora", 2),)),))
    change = estimate_change(old, new)
    assert change is not None and change.severity is Severity.LOW


def test_parameters_alone_are_an_architecture_change_and_nothing_moved_is_none() -> None:
    change = estimate_change(estimate(10.0, 3, derived=1000), estimate(10.0, 3, derived=2000))
    assert change is not None and change.kind is Kind.ARCHITECTURE and change.severity is Severity.LOW
    assert change.summary == "estimate moved: derived parameters 1,000 → 2,000"
    assert change.detail["params_derived"] == {"old": 1000, "new": 2000} and "memory" not in change.detail
    assert estimate_change(estimate(10.0, 3), estimate(10.0, 3)) is None
    assert estimate_change(Estimate.failed("1.1.0", "bad"), estimate(10.0, 3)) is None
    assert estimate_change(None, estimate(10.0, 3)) is None
