"""The standing at a repo's newest revision, computed once per history version.

The standing of a pin reads the repo's whole main line and every advisory of the repo, so on a deep
history it is the one part of the model page that grows with depth. Every write that can change it
(a stored revision, an upserted or withdrawn advisory, a force-push, a head move, a rename) raises
the repo's `history_version` in the same transaction (`storage.summaries`), so the result is kept
per (store, repo row, version, pin) and recomputed only after such a write: one summary row read
per request otherwise. Bounded: the least recently used entries go first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from hubwatch.advisories.standing import Standing
from hubwatch.domain.records import RepoId
from hubwatch.feeds.builders.standing import load_standing

if TYPE_CHECKING:
    from hubwatch.storage import Store

__all__ = ["MAX_ENTRIES", "head_standing"]

MAX_ENTRIES = 512  # per store; a Standing holds the records a pin lacks or carries, no more

_Key = tuple[int, int, str]
_caches: WeakKeyDictionary[object, OrderedDict[_Key, Standing | None]] = WeakKeyDictionary()
_lock = threading.Lock()


def head_standing(store: "Store", repo: RepoId, sha: str) -> Standing | None:
    """`load_standing(store, repo, sha)`, reused while the repo's history version has not moved."""
    summary = store.summary(repo)
    if summary is None:
        return load_standing(store, repo, sha)
    key = (summary.repo_id, summary.version, sha.lower())
    with _lock:
        cache = _caches.setdefault(store, OrderedDict())
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    result = load_standing(store, repo, sha)
    # A write between the summary read and the load only makes this entry stale-keyed (the
    # version moved past it): the next request reads the new version and recomputes.
    with _lock:
        cache[key] = result
        while len(cache) > MAX_ENTRIES:
            cache.popitem(last=False)
    return result
