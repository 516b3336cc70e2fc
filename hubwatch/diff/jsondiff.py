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

from hubwatch.domain.parsed_json import remote_json

__all__ = ["JsonDoc", "KeyChange", "MISSING", "key_changes", "parse_json", "lookup"]

# deepdiff's own default: two dicts sharing under a third of their keys are one change, not one per key
_DIFF_DEEPER = 0.33


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
        return JsonDoc(remote_json(raw, reject_constants=True, max_values=max_values))
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
    """Every dict key path whose value differs between `old` and `new`, sorted by path.

    Two dicts are walked key by key as deepdiff walks them (a key on one side only is a path; dicts
    sharing under a third of their keys are one path), but a key whose values are equal
    (`_same_deep`) is skipped before deepdiff sees it and deepdiff runs only on the values of a key
    that differ and are not both dicts: a 56 KB tokenizer_config with one changed key costs one
    small deepdiff, not one of the whole document, and the paths are those of the whole one."""
    if isinstance(old, dict) and isinstance(new, dict) and (not old or not new):
        # deepdiff reports an empty side as one root change; report each key instead
        every = sorted(set(old) | set(new))
        return [KeyChange((k,), old.get(k, MISSING), new.get(k, MISSING)) for k in every]
    paths: set[tuple[str, ...]] = set()
    _differing_paths(old, new, (), paths)
    changes: list[KeyChange] = []
    for path in sorted(paths):
        before, after = lookup(old, path), lookup(new, path)
        if before is not MISSING and after is not MISSING and _same_deep(before, after):
            continue
        changes.append(KeyChange(path, before, after))
    return changes


def _differing_paths(old: Any, new: Any, prefix: tuple[str, ...], paths: set[tuple[str, ...]]) -> None:
    """Add to `paths` the key paths (below `prefix`) deepdiff reports between `old` and `new`
    (dicts with a key that is not a string, as YAML allows, are left whole to deepdiff)."""
    keys = old.keys() | new.keys() if isinstance(old, dict) and isinstance(new, dict) else None
    if keys is not None and all(isinstance(key, str) for key in keys):
        if len(keys) > 1 and len(old.keys() & new.keys()) / len(keys) < _DIFF_DEEPER:
            paths.add(prefix)  # deepdiff: too few keys shared, the whole dict is one change
            return
        for key in keys:
            if key not in old or key not in new:
                paths.add((*prefix, key))  # deepdiff: dictionary_item_added / _removed
            elif not _same_deep(old[key], new[key]):
                _differing_paths(old[key], new[key], (*prefix, key), paths)
        return
    for found in _deepdiff_paths(old, new):
        paths.add((*prefix, *found))


def _deepdiff_paths(old: Any, new: Any) -> set[tuple[str, ...]]:
    """The key paths of deepdiff's changes between two values (cut at the first list index)."""
    diff = DeepDiff(
        _mark_bools(old),
        _mark_bools(new),
        ignore_numeric_type_changes=True,
        ignore_nan_inequality=True,
        threshold_to_diff_deeper=_DIFF_DEEPER,
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
    return paths


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
