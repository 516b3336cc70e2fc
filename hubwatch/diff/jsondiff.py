"""Key-level differences between two parsed JSON documents, computed with deepdiff.

Key order, whitespace and number formatting (1e-05 vs 0.00001, 1 vs 1.0) never count: the
documents are compared as parsed values. Changes are reported per dict key path; a change
inside a list is reported on the key that holds the list (old and new being the whole lists).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from deepdiff import DeepDiff

from hubwatch.domain.remote_data import load_remote_json

__all__ = ["JsonDoc", "KeyChange", "MISSING", "key_changes", "parse_json", "lookup"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class JsonDoc:
    """A parsed JSON file, or the reason it could not be parsed."""

    value: Any
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class KeyChange:
    """One key whose value differs: `path` is the chain of dict keys from the root."""

    path: tuple[str, ...]
    old: Any  # MISSING when added
    new: Any  # MISSING when removed

    @property
    def key(self) -> str:
        return ".".join(self.path)

    @property
    def op(self) -> str:
        if self.old is MISSING:
            return "added"
        if self.new is MISSING:
            return "removed"
        return "changed"

    @property
    def leaf(self) -> str:
        return self.path[-1] if self.path else ""


def parse_json(raw: bytes | None, *, max_values: int | None = None) -> JsonDoc | None:
    """Parse raw bytes as JSON (NaN/Infinity refused, size and nesting bounded, and at most
    `max_values` values when given); None when there is no file."""
    if raw is None:
        return None
    try:
        return JsonDoc(load_remote_json(raw, reject_constants=True, max_values=max_values))
    except ValueError as exc:  # not JSON, not UTF-8, too large or too deeply nested
        return JsonDoc(None, f"{type(exc).__name__}: {str(exc)[:200]}")


def lookup(value: Any, path: tuple[str, ...]) -> Any:
    """The value at a dict key path, or MISSING."""
    for part in path:
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


def _same(a: Any, b: Any) -> bool:
    """Equality with numbers compared by value (1 == 1.0) but booleans kept apart from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    return bool(a == b) if type(a) is type(b) else False


def key_changes(old: Any, new: Any) -> list[KeyChange]:
    """Every dict key path whose value differs between `old` and `new`, sorted by path."""
    if isinstance(old, dict) and isinstance(new, dict) and (not old or not new):
        # deepdiff reports an empty side as one root change; report each key instead
        every = sorted(set(old) | set(new))
        return [KeyChange((k,), old.get(k, MISSING), new.get(k, MISSING)) for k in every]
    diff = DeepDiff(
        _mark_bools(old),
        _mark_bools(new),
        ignore_numeric_type_changes=True,
        ignore_nan_inequality=True,
        view="tree",
        cache_size=0,
    )
    paths: set[tuple[str, ...]] = set()
    for levels in diff.values():
        for level in levels:
            parts = level.path(output_format="list")
            keys: list[str] = []
            for part in parts:
                if not isinstance(part, str):
                    break  # a list index: report on the key holding the list
                keys.append(part)
            paths.add(tuple(keys))
    changes: list[KeyChange] = []
    for path in sorted(paths):
        before, after = lookup(old, path), lookup(new, path)
        if before is not MISSING and after is not MISSING and _same_deep(before, after):
            continue
        changes.append(KeyChange(path, before, after))
    return changes


def _mark_bools(value: Any) -> Any:
    """Booleans as markers, so deepdiff's numeric comparison never equates true with 1."""
    if isinstance(value, bool):
        return "\x00hubwatch:true" if value else "\x00hubwatch:false"
    if isinstance(value, dict):
        return {k: _mark_bools(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mark_bools(v) for v in value]
    return value


def _same_deep(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_deep(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_deep(x, y) for x, y in zip(a, b))
    return _same(a, b)
