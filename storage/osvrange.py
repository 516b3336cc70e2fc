"""OSV GIT-range semantics over the stored history: the lineage of a pin from stored revisions.

The pure range logic lives in `hubwatch.advisories.gitrange` (advisories import no storage);
it is re-exported here for the storage modules that use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hubwatch.advisories.gitrange import EVENT_KINDS, GitEvent, Lineage, affects_at, git_events, range_affects

__all__ = [
    "EVENT_KINDS",
    "GitEvent",
    "Lineage",
    "StoredRevision",
    "affects_at",
    "git_events",
    "lineage",
    "range_affects",
]


@dataclass(frozen=True)
class StoredRevision:
    id: int
    sha: str
    parent: str | None
    position: int


def lineage(revisions: Sequence[StoredRevision], pin: str) -> Lineage | None:
    """Ancestors of `pin` (inclusive), oldest first, following parent links.

    When a revision has no recorded parent but is not the first one, the latest stored
    revision at the position before it stands in as its parent (linear history).
    """
    by_sha = {r.sha: r for r in revisions}
    current = by_sha.get(pin)
    if current is None:
        return None
    by_position: dict[int, StoredRevision] = {}
    for r in sorted(revisions, key=lambda r: (r.position, r.id)):
        by_position[r.position] = r
    chain = [current.sha]
    seen = {current.sha}
    while True:
        nxt: StoredRevision | None
        if current.parent is not None:
            nxt = by_sha.get(current.parent)
        else:
            nxt = by_position.get(current.position - 1) if current.position > 0 else None
        if nxt is None or nxt.sha in seen:
            break
        chain.append(nxt.sha)
        seen.add(nxt.sha)
        current = nxt
    return Lineage(tuple(reversed(chain)))
