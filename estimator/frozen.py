"""Frozen values built and read cheaply: `quick_init` (a frozen dataclass built at the speed of a plain one) and `once`.

The `__init__` that `dataclasses` writes for a frozen class sets every field through
`object.__setattr__` (the class's own `__setattr__` refuses), about 0.15 µs a field: one estimate
builds a few hundred small frozen values (linears, stacks, each method's memory, card rows), and
that alone was a tenth of its time. `quick_init` gives such a class an `__init__` with the same
signature and defaults that stores the fields in the instance's `__dict__` directly. The class
stays frozen: assigning an attribute still raises `FrozenInstanceError`; equality, hashing, `repr`
and `dataclasses.replace` are the dataclass's own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast, overload

__all__ = ["once", "quick_init"]

_T = TypeVar("_T")


def quick_init(cls: type[_T]) -> type[_T]:
    """Replaces the generated `__init__` of the frozen dataclass `cls` (no `__post_init__`, no
    `__slots__`, every field in `__init__`) with one that writes the fields into `__dict__`."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen:
        raise TypeError(f"{cls.__name__}: quick_init is for frozen dataclasses")
    if hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__:
        raise TypeError(f"{cls.__name__}: quick_init cannot keep a __post_init__ or __slots__")
    fields = dataclasses.fields(cast(Any, cls))  # checked above to be a dataclass
    if any(not f.init for f in fields):
        raise TypeError(f"{cls.__name__}: quick_init needs every field in __init__")
    env: dict[str, Any] = {"_FACTORY": _FACTORY}
    args: list[str] = []
    body: list[str] = []
    for f in fields:
        if f.default is not dataclasses.MISSING:
            env[f"_d_{f.name}"] = f.default
            args.append(f"{f.name}=_d_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_f_{f.name}"] = f.default_factory
            args.append(f"{f.name}=_FACTORY")
            body.append(f"    if {f.name} is _FACTORY: {f.name} = _f_{f.name}()")
        else:
            args.append(f.name)
    body.append("    self.__dict__.update({" + ", ".join(f"{f.name!r}: {f.name}" for f in fields) + "})")
    source = f"def __init__(self, {', '.join(args)}):\n" + "\n".join(body) + "\n"
    exec(source, env)  # noqa: S102 - generated from the field names, as dataclasses does
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    setattr(cls, "__init__", init)  # noqa: B010 - replacing the method, as dataclasses adds it
    return cls


class _FactorySentinel:
    def __repr__(self) -> str:
        return "<default factory>"


_FACTORY = _FactorySentinel()


class once(Generic[_T]):  # noqa: N801 - used as a decorator, like functools.cached_property
    """`functools.cached_property` without its lock (Python 3.11 takes an RLock on every first read;
    the values here are frozen and computed from frozen fields, so two threads computing one agree).

    The value is stored in the instance's `__dict__` under the property's name, so later reads
    find it there without calling the descriptor.
    """

    def __init__(self, fn: Callable[[Any], _T]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> once[_T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> once[_T] | _T:
        if obj is None:
            return self
        value = self.fn(obj)
        obj.__dict__[self.name] = value
        return value
