"""What a read derives from a repo's whole stored history, kept per (repo, history version) in the process.

Every write that can change a repo's history or advisories raises its `history_version` in the
same transaction (`storage.summaries`), so what is derived from them (the interval index of its
advisory ranges, a non-linear history's main line and advisories) stays right until the version
moves: it is built on the first read of a version and reused by every later one. Kept per engine,
least recently used dropped first, within a number of entries and a budget of size units (about
200 bytes each: a stretch, a revision, an event; a decoded record counts as RECORD_UNITS).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar, cast
from weakref import WeakKeyDictionary

import sqlalchemy as sa
from hubwatch.storage.core.tables import REPOS
from sqlalchemy.engine import Connection, Engine

__all__ = ["MAX_ENTRIES", "MAX_UNITS", "RECORD_UNITS", "forget", "kept_units", "per_version"]

T = TypeVar("T")

MAX_ENTRIES, MAX_UNITS = 1024, 200_000
RECORD_UNITS = 15  # a decoded advisory (a few KB of OSV JSON) in size units

_kept: WeakKeyDictionary[Engine, OrderedDict[tuple[object, ...], tuple[object, int]]] = WeakKeyDictionary()
_lock = threading.Lock()


def per_version(conn: Connection, repo_id: int, kind: str, build: Callable[[], tuple[T, int]]) -> T:
    """The `kind` value of the repo at its history version now: `build()` (the value and its size in
    units) on the first ask of a version, the kept value after that."""
    # The repo's name and revision count with the version: a row id SQLite hands out again after a
    # merge deleted its row starts its versions anew, and must not find the old row's values.
    row = conn.execute(
        sa.select(REPOS.c.history_version, REPOS.c.key, REPOS.c.revision_count).where(REPOS.c.id == repo_id)
    ).one_or_none()
    key = (kind, repo_id, *row) if row is not None else (kind, repo_id, 0, "", 0)
    with _lock:
        seen = _kept.setdefault(conn.engine, OrderedDict())
        found = seen.get(key)
        if found is not None:
            seen.move_to_end(key)
            return cast(T, found[0])
    value, size = build()
    with _lock:
        seen = _kept.setdefault(conn.engine, OrderedDict())
        seen[key] = (value, size)
        total = sum(units for _, units in seen.values())
        while len(seen) > 1 and (len(seen) > MAX_ENTRIES or total > MAX_UNITS):
            total -= seen.popitem(last=False)[1][1]
    return value


def kept_units(engine: Engine) -> int:
    """The size units kept for `engine` now (for tests and benchmarks)."""
    with _lock:
        return sum(units for _, units in _kept.get(engine, OrderedDict()).values())


def forget(engine: Engine | None = None) -> None:
    """Drop what is kept (for `engine`, or for every engine): what a new process starts from."""
    with _lock:
        if engine is None:
            _kept.clear()
        else:
            _kept.pop(engine, None)
