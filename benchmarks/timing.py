"""`p50_ms`: the median wall time of a call, in milliseconds, after one warm-up call (shared by the benchmarks)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

__all__ = ["p50_ms"]


def p50_ms(call: Callable[[], object], runs: int) -> float:
    """Median milliseconds of `runs` calls of `call`, the first call before them not counted
    (connections opened, caches filled)."""
    call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)
