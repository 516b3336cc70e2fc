"""The check the benchmarks that compare against torch/transformers run first: a clear message, not a traceback.

Those packages are the optional `bench` extra (pyproject.toml), never needed at run time.
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["BENCH_INSTALL", "missing_bench_extra"]

BENCH_INSTALL = "pip install -e '.[bench]'  (torch, transformers, peft, accelerate, bitsandbytes, pinned)"


def missing_bench_extra(benchmark: str, *modules: str) -> int | None:
    """None when every module is importable; else print which are missing and how to install
    them, and return the exit status 2 for the benchmark's `main` to return."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return None
    print(f"{benchmark} needs the bench extra ({', '.join(missing)} not installed): {BENCH_INSTALL}", file=sys.stderr)
    return 2
