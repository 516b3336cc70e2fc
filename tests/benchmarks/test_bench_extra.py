"""The benchmarks that need the `bench` extra say so, with the install line, instead of a traceback."""

from __future__ import annotations

import pytest

from benchmarks.bench_extra import BENCH_INSTALL, missing_bench_extra


def test_present_modules_pass() -> None:
    assert missing_bench_extra("x", "json", "click") is None


def test_a_missing_module_is_named_with_the_install_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert missing_bench_extra("memory_measure_cpu", "json", "hubwatch_no_such_module") == 2
    err = capsys.readouterr().err
    assert "memory_measure_cpu needs the bench extra (hubwatch_no_such_module not installed)" in err
    assert BENCH_INSTALL in err and "json" not in err.split("(")[1].split(")")[0]


@pytest.mark.parametrize("name", ["estimator_speed", "make_estimator_defaults", "memory_measure_cpu"])
def test_bench_benchmarks_check_first(name: str) -> None:
    """Each benchmark importing torch/transformers calls the check before importing them."""
    import importlib
    import inspect

    source = inspect.getsource(importlib.import_module(f"benchmarks.{name}").main)
    assert source.index("missing_bench_extra(") < source.index("import t")
