"""The estimator's value-class helpers (`frozen`, `mutable`, `once`) and its rounding (`rounded`, `gb`)."""

from __future__ import annotations

import dataclasses
import math
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hubwatch.estimator.frozen import frozen, mutable, once
from hubwatch.estimator.rounding import gb, rounded


@frozen
class _Value:
    """A frozen value class."""

    name: str
    size: int = 3
    parts: dict[str, int] = dataclasses.field(default_factory=dict)

    @once
    def doubled(self) -> int:
        return 2 * self.size


@dataclasses.dataclass(frozen=True)
class _Reference:
    """The same class, as the standard library makes it."""

    name: str
    size: int = 3
    parts: dict[str, int] = dataclasses.field(default_factory=dict)


@frozen
class _Checked:
    """A frozen value class that checks itself."""

    size: int
    label: str = dataclasses.field(default="", repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.size < 0:
            raise ValueError(f"size must be >= 0, got {self.size}")


@mutable
class _Filled:
    """A mutable value class."""

    name: str
    items: list[int] = dataclasses.field(default_factory=list)


def test_frozen_keeps_the_dataclass_signature_defaults_and_frozenness() -> None:
    assert _Value("a") == _Value(name="a", size=3, parts={})
    assert _Value("a") != _Value("a", 4)
    assert _Value("a").parts is not _Value("a").parts  # a fresh default per instance
    assert dataclasses.replace(_Value("a"), size=5) == _Value("a", 5)
    assert hash(_Value("a", 1, None)) == hash(_Value("a", 1, None))  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'size'"):
        _Value("a").size = 4  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'size'"):
        del _Value("a").size  # type: ignore[misc]
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'name'"):
        _Value()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        _Value("a", colour=1)  # type: ignore[call-arg]


def test_frozen_answers_as_the_standard_dataclass_does() -> None:
    ours, theirs = _Value("a", 2, {"x": 1}), _Reference("a", 2, {"x": 1})
    assert repr(ours) == repr(theirs).replace("_Reference", "_Value")
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(theirs)]
    assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)
    assert dataclasses.astuple(ours) == dataclasses.astuple(theirs)
    assert _Value.__match_args__ == _Reference.__match_args__
    assert dataclasses.is_dataclass(ours)
    assert hash(_Value("a", 2, None)) == hash(_Reference("a", 2, None))  # type: ignore[arg-type]
    assert ours.__eq__(theirs) is NotImplemented  # another class is not equal, as with dataclasses
    assert pickle.loads(pickle.dumps(ours)) == ours
    match ours:
        case _Value(name, size):
            assert (name, size) == ("a", 2)
        case _:
            pytest.fail("positional match")


def test_frozen_runs_post_init_and_keeps_field_options() -> None:
    with pytest.raises(ValueError, match="size must be >= 0"):
        _Checked(-1)
    assert _Checked(2, "one") == _Checked(2, "two")  # compare=False
    assert hash(_Checked(2, "one")) == hash(_Checked(2, "two"))
    assert repr(_Checked(2, "one")) == "_Checked(size=2)"  # repr=False


def test_mutable_is_an_unhashable_dataclass() -> None:
    v = _Filled("a")
    v.items.append(1)
    v.name = "b"
    assert v == _Filled("b", [1])
    assert repr(v) == "_Filled(name='b', items=[1])"
    assert _Filled("a").items is not _Filled("a").items
    with pytest.raises(TypeError, match="unhashable"):
        hash(v)


def test_value_classes_refuse_what_they_cannot_keep() -> None:
    with pytest.raises(TypeError, match="docstring"):
        frozen(type("Plain", (), {"__annotations__": {"a": "int"}}))
    with pytest.raises(TypeError, match="__slots__"):
        frozen(type("Slotted", (), {"__doc__": "d", "__slots__": ("a",), "__annotations__": {"a": "int"}}))
    with pytest.raises(TypeError, match="__setattr__"):
        frozen(type("Setter", (), {"__doc__": "d", "__setattr__": lambda self, n, v: None}))
    with pytest.raises(TypeError, match="every field in __init__"):
        frozen(type("Hidden", (), {"__doc__": "d", "__annotations__": {"a": "int"}, "a": dataclasses.field(init=False)}))


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
