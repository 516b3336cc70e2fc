"""The lineage of a pin from stored revisions: its ancestors, walked along their parent links.

What an OSV GIT range is evaluated against (`hubwatch.domain.gitrange.Lineage`); the range
semantics themselves are the domain's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hubwatch.domain.gitrange import Lineage

__all__ = ["Ancestry", "StoredRevision", "lineage"]


@dataclass(frozen=True)
class StoredRevision:
    """A stored revision's place: its row id, sha, parent and position in the repo's history."""

    id: int
    sha: str
    parent: str | None
    position: int


def lineage(revisions: Sequence[StoredRevision], pin: str) -> Lineage | None:
    """Ancestors of `pin` (inclusive), oldest first, following parent links.

    A revision without a recorded parent is a root, wherever it is placed: the first commit, or
    the one commit a history squashed upstream (`super_squash_history`, a force-push sharing no
    commit) starts again from; the revisions stored before it are not its ancestors.
    """
    return Ancestry(revisions).lineage(pin)


class Ancestry:
    """`lineage` of any pin over one set of stored revisions, their links read once."""

    def __init__(self, revisions: Sequence[StoredRevision]) -> None:
        self._by_sha = {r.sha: r for r in revisions}
        self.size = len(revisions)

    @property
    def shas(self) -> list[str]:
        return list(self._by_sha)

    def parent_of(self, sha: str) -> str | None:
        """The stored revision the walk goes to from `sha`: its parent, when that is stored."""
        parent = self._by_sha[sha].parent
        return parent if parent is not None and parent in self._by_sha else None

    def lineage(self, pin: str) -> Lineage | None:
        if pin not in self._by_sha:
            return None
        chain = [pin]
        seen = {pin}
        while True:
            nxt = self.parent_of(chain[-1])
            if nxt is None or nxt in seen:
                break
            chain.append(nxt)
            seen.add(nxt)
        return Lineage(tuple(reversed(chain)))
