"""OSV GIT-range semantics over a linear history (pure functions, no database)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["GitEvent", "Lineage", "StoredRevision", "git_events", "lineage", "range_affects"]

EVENT_KINDS = ("introduced", "fixed", "last_affected", "limit")


@dataclass(frozen=True)
class GitEvent:
    range_index: int
    ordinal: int
    event: str  # one of EVENT_KINDS
    value: str  # "0" or a commit sha (lowercase)
    range_repo: str | None = None


def git_events(osv: Mapping[str, Any]) -> list[GitEvent]:
    """The events of every GIT range of an OSV record, numbered over all its affected[] entries."""
    out: list[GitEvent] = []
    range_index = 0
    for affected in osv.get("affected") or []:
        if not isinstance(affected, Mapping):
            continue
        for rng in affected.get("ranges") or []:
            if not isinstance(rng, Mapping) or rng.get("type") != "GIT":
                continue
            repo = rng.get("repo")
            for ordinal, evt in enumerate(rng.get("events") or []):
                if not isinstance(evt, Mapping):
                    continue
                for kind in EVENT_KINDS:
                    value = evt.get(kind)
                    if isinstance(value, str) and value:
                        out.append(
                            GitEvent(
                                range_index,
                                ordinal,
                                kind,
                                value.strip().lower(),
                                repo if isinstance(repo, str) else None,
                            )
                        )
            range_index += 1
    return out


@dataclass(frozen=True)
class Lineage:
    """The commits from the oldest known ancestor to the pin; index(pin) == len - 1."""

    shas: tuple[str, ...]

    def index(self, sha: str) -> int | None:
        if sha == "0":
            return -1
        try:
            return self.shas.index(sha)
        except ValueError:
            return None


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


def range_affects(events: Iterable[GitEvent], line: Lineage) -> bool:
    """OSV's IsVulnerable for one GIT range: walk the events that are ancestors of the pin, in order.

    introduced → affected; fixed → not affected (the fix commit itself is clean);
    last_affected before the pin → not affected; a limit at or before the pin → outside the range.
    Events on commits that are not ancestors of the pin do not apply.
    """
    pin = len(line.shas) - 1
    ordered: list[tuple[int, int, GitEvent]] = []
    for evt in events:
        if evt.event == "limit":
            if evt.value == "*":
                continue
            at = line.index(evt.value)
            if at is not None and at >= 0:
                return False
            continue
        at = line.index(evt.value)
        if at is None or (at == -1 and evt.event != "introduced"):
            continue
        ordered.append((at, 0 if evt.event == "introduced" else 1, evt))
    affected = False
    for at, _, evt in sorted(ordered, key=lambda t: (t[0], t[1])):
        if evt.event == "introduced":
            affected = True
        elif evt.event == "fixed" or evt.event == "last_affected" and at < pin:
            affected = False
    return affected
