"""The estimator's frozen-value helpers (`quick_init`, `once`) and its rounding (`rounded`, `gb`)."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hubwatch.estimator.frozen import once, quick_init
from hubwatch.estimator.rounding import gb, rounded


@quick_init
@dataclasses.dataclass(frozen=True)
class _Value:
    name: str
    size: int = 3
    parts: dict[str, int] = dataclasses.field(default_factory=dict)

    @once
    def doubled(self) -> int:
        return 2 * self.size


def test_quick_init_keeps_the_dataclass_signature_defaults_and_frozenness() -> None:
    assert _Value("a") == _Value(name="a", size=3, parts={})
    assert _Value("a").parts is not _Value("a").parts  # a fresh default per instance
    assert dataclasses.replace(_Value("a"), size=5) == _Value("a", 5)
    assert hash(_Value("a", 1, None)) == hash(_Value("a", 1, None))  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        _Value("a").size = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        _Value()  # type: ignore[call-arg]


def test_quick_init_refuses_what_it_cannot_keep() -> None:
    with pytest.raises(TypeError):
        quick_init(dataclasses.dataclass(type("Plain", (), {"__annotations__": {"a": int}})))

    class Checked:
        a: int

        def __post_init__(self) -> None:
            pass

    with pytest.raises(TypeError):
        quick_init(dataclasses.dataclass(frozen=True)(Checked))


def test_once_computes_once_per_instance() -> None:
    v = _Value("a", 4)
    assert v.doubled == 8
    assert v.__dict__["doubled"] == 8
    assert isinstance(_Value.__dict__["doubled"], once)


_FIGURES = st.floats(min_value=-1e16, max_value=1e16, allow_nan=False) | st.floats() \
    | st.integers(min_value=0, max_value=10 ** 7).map(lambda k: k / 2000)  # exact ties (k · 0.0005)


@given(_FIGURES, st.sampled_from([0, 1, 2, 3, 6]))
def test_rounded_is_round(x: float, digits: int) -> None:
    want = round(x, digits) if math.isfinite(x) else x
    got = rounded(x, digits) if math.isfinite(x) else x
    assert repr(got) == repr(want)


@given(_FIGURES.map(lambda x: x * 1e9) | st.floats(min_value=0, max_value=1e15))
def test_gb_is_round_to_three_decimals(value: float) -> None:
    if math.isfinite(value / 1e9):
        assert repr(gb(value)) == repr(round(value / 1e9, 3))


def test_rounded_keeps_ints_and_signed_zeros() -> None:
    assert repr(rounded(5, 3)) == "5"
    assert repr(rounded(-0.0, 2)) == "-0.0"
    assert repr(gb(-0.0)) == "-0.0"
    assert rounded(0.0625, 3) == 0.062  # an exact tie goes to even, as round does
