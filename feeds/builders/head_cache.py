"""What a model page derives from a repo's whole history, computed once per history version.

The standing of a pin at the newest revision reads the repo's whole main line and every advisory of
the repo, and the charts read a series spread over the whole history: on a deep history they are
the parts of the model page that grow with depth. Every write that can change them (a stored
revision or estimate, an upserted or withdrawn advisory, a force-push, a head move, a rename) raises
the repo's `history_version` in the same transaction (`storage.summaries`), so each result is kept
per (store, repo row, version, key) and recomputed only after such a write: otherwise one summary
row read per request, however deep the history. Bounded: the least recently used entries go first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar, cast
from weakref import WeakKeyDictionary

from hubwatch.advisories.standing import Standing
from hubwatch.domain.records import RepoId
from hubwatch.feeds.builders.standing import load_standing

if TYPE_CHECKING:
    from hubwatch.storage import Store
    from hubwatch.storage.core.summaries import RepoSummary

__all__ = ["MAX_ENTRIES", "head_standing", "per_version"]

MAX_ENTRIES = 512  # per store; a Standing holds the records a pin lacks or carries, charts ~20 kB

T = TypeVar("T")
_Key = tuple[int, int, Hashable]
_caches: WeakKeyDictionary[object, OrderedDict[_Key, Any]] = WeakKeyDictionary()
_lock = threading.Lock()


def per_version(store: "Store", summary: "RepoSummary | None", key: Hashable, compute: Callable[[], T]) -> T:
    """`compute()`, reused while the repo of `summary` keeps its history version (`summary` None:
    a repo the store does not know, computed every time)."""
    if summary is None:
        return compute()
    full = (summary.repo_id, summary.version, key)
    with _lock:
        cache = _caches.setdefault(store, OrderedDict())
        if full in cache:
            cache.move_to_end(full)
            return cast(T, cache[full])
    result = compute()
    # A write between the summary read and `compute` only leaves this entry under a version that
    # has moved on: the next request reads the new version and computes again.
    with _lock:
        cache[full] = result
        while len(cache) > MAX_ENTRIES:
            cache.popitem(last=False)
    return result


def head_standing(store: "Store", repo: RepoId, sha: str, summary: "RepoSummary | None" = None) -> Standing | None:
    """`load_standing(store, repo, sha)`, reused while the repo's history version has not moved."""
    summary = summary if summary is not None else store.summary(repo)
    return per_version(store, summary, ("standing", sha.lower()), lambda: load_standing(store, repo, sha))
