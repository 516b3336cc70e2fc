"""Value classes cheap to define and to build: `frozen` and `mutable` (dataclasses, methods made on first use), `once`.

`dataclasses.dataclass` writes each method a class gets (`__init__`, `__repr__`, `__eq__`,
`__hash__`, a frozen class's `__setattr__` and `__delattr__`) as source and compiles it when the
class is defined: about 0.4 ms a class, and `hubwatch estimate CONFIG` defines some fifty of them
before it estimates anything. `frozen` (and `mutable`, for a value filled in while it is built)
keep the dataclass (its fields, `dataclasses.fields`, `replace` and `asdict`, `__match_args__`)
but make it without those methods: `__init__` is compiled the first time the class is called
(storing the fields in the instance's `__dict__`, not through `object.__setattr__` a field at a
time, then calling `__post_init__` if the class has one), and equality, hashing, `repr` and the
frozen class's refusal to assign are shared functions over the class's field names. What they
do is what the dataclass's own methods do (the same `repr`, the same tuple compared and hashed,
`FrozenInstanceError` on assignment); type checkers read both as dataclasses
(`typing.dataclass_transform`).
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any, Generic, TypeVar, cast, dataclass_transform, overload

__all__ = ["frozen", "mutable", "once"]

_T = TypeVar("_T")


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def frozen(cls: type[_T]) -> type[_T]:
    """`@dataclass(frozen=True)`, its methods made on first use (see the module's docstring)."""
    return _value_class(cls, frozen=True)


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def mutable(cls: type[_T]) -> type[_T]:
    """`@dataclass`, its methods made on first use (see the module's docstring)."""
    return _value_class(cls, frozen=False)


def _value_class(cls: type[_T], *, frozen: bool) -> type[_T]:
    own = cls.__dict__
    if "__slots__" in own:
        raise TypeError(f"{cls.__name__}: a value class keeps its fields in __dict__, so it cannot have __slots__")
    if not own.get("__doc__"):  # the dataclass would write one from a signature made on first use
        raise TypeError(f"{cls.__name__}: give the value class a docstring")
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        raise TypeError(f"{cls.__name__}: a frozen value class cannot define __setattr__ or __delattr__")
    explicit_hash = own.get("__hash__", dataclasses.MISSING)
    has_explicit_hash = not (explicit_hash is dataclasses.MISSING or (explicit_hash is None and "__eq__" in own))
    made = cast(Any, dataclasses.dataclass(init=False, repr=False, eq=False)(cls))
    fields = dataclasses.fields(made)
    if any(not f.init for f in fields):
        raise TypeError(f"{cls.__name__}: a value class needs every field in __init__")
    made.__init__ = _first_init(made)
    if "__repr__" not in own:
        made.__repr__ = _repr(tuple(f.name for f in fields if f.repr))
    if "__eq__" not in own:
        made.__eq__ = _eq(_values(tuple(f.name for f in fields if f.compare)))
    if not has_explicit_hash:  # as the dataclass: frozen and compared is hashed by its fields, mutable is unhashable
        hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        made.__hash__ = _hash(_values(hashed)) if frozen else None
    if frozen:
        made.__setattr__, made.__delattr__ = _refusals(made, frozenset(f.name for f in fields))
    return cast("type[_T]", made)


def _first_init(cls: Any) -> Callable[..., None]:
    """An `__init__` that compiles the class's own, puts it on the class and calls it."""

    def __init__(self: object, *args: Any, **kwargs: Any) -> None:
        init = _compiled_init(cls)
        cls.__init__ = init
        init(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _compiled_init(cls: Any) -> Callable[..., None]:
    """The dataclass's signature and defaults (a fresh default from each factory), storing into `__dict__`."""
    fields = dataclasses.fields(cls)
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
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(args)}):\n" + "\n".join(body) + "\n"
    exec(source, env)  # noqa: S102 - generated from the field names, as dataclasses does
    init: Callable[..., None] = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _values(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """The tuple of the named fields of an instance, as the dataclass's methods build it."""
    if len(names) > 1:
        return cast("Callable[[object], tuple[Any, ...]]", attrgetter(*names))
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _repr(names: tuple[str, ...]) -> Callable[[object], str]:
    @reprlib.recursive_repr()
    def __repr__(self: object) -> str:
        return self.__class__.__qualname__ + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"

    return __repr__


def _eq(values: Callable[[object], tuple[Any, ...]]) -> Callable[[object, object], Any]:
    def __eq__(self: object, other: object) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash(values: Callable[[object], tuple[Any, ...]]) -> Callable[[object], int]:
    def __hash__(self: object) -> int:
        return hash(values(self))

    return __hash__


def _refusals(cls: Any, names: frozenset[str]) -> tuple[Callable[[object, str, Any], None],
                                                        Callable[[object, str], None]]:
    """A frozen dataclass's `__setattr__` and `__delattr__`: a field of the class, or any name on the
    class itself, raises `FrozenInstanceError`."""

    def __setattr__(self: object, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__


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
