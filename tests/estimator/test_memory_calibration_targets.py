"""Issue 14's memory targets against the stored published measurements (benchmarks/data; no torch).

Memory within ±20% of the measured peaks on at least 80% of the rows, per stack that has peaks;
"fits" never said for a run that ran out of memory or ran at its card's limit (issue 35: no-fit
recall 100%), per stack and overall.
"""

from __future__ import annotations

import pytest

from benchmarks.memory_calibration import fit_checks, run, summary


@pytest.fixture(scope="module")
def figures() -> dict[str, tuple[int, int, int, int, int]]:
    outcomes = run()
    return {s.stack: (s.peak_within, s.peak_rows, s.oom_flagged, s.oom_rows, s.limit_rows)
            for s in summary(outcomes, fit_checks(outcomes))}


def test_the_data_can_fail_the_targets(figures: dict[str, tuple[int, int, int, int, int]]) -> None:
    within, peaks, flagged, oom, limit = figures["all"]
    assert peaks >= 20 and oom >= 10 and limit >= 10  # runs at the card's limit, of two stacks:
    assert figures["hf"][4] and figures["unsloth"][4]
    assert sum(1 for stack, f in figures.items() if stack != "all" and f[3]) >= 2  # OOM runs of two stacks


def test_peaks_within_20_percent_on_80_percent(figures: dict[str, tuple[int, int, int, int, int]]) -> None:
    for stack, (within, peaks, _, _, _) in figures.items():
        if peaks:
            assert within / peaks >= 0.8, f"{stack}: {within}/{peaks} peaks within ±20%"


def test_fits_never_said_for_a_run_that_did_not_fit(figures: dict[str, tuple[int, int, int, int, int]]) -> None:
    for stack, (_, _, flagged, oom, limit) in figures.items():
        if oom:
            assert flagged == oom, f"{stack}: {flagged}/{oom} out-of-memory or at-the-limit ({limit}) runs said not to fit"
