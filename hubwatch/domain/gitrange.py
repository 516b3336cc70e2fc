"""OSV GIT ranges: a record's events, a pin's lineage, and whether one range holds a pin (pure).

The vocabulary every reader of an OSV range speaks: the advisories room builds and evaluates
records with it (`hubwatch.advisories.gitrange` adds the sweeps along a whole line), and storage
indexes records by their events and answers "which advisories affect this pin" with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

__all__ = ["EVENT_KINDS", "GitEvent", "Lineage", "affects_at", "git_events", "range_affects"]

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

    @cached_property
    def _at(self) -> dict[str, int]:
        at: dict[str, int] = {}
        for i, sha in enumerate(self.shas):
            at.setdefault(sha, i)
        return at

    def index(self, sha: str) -> int | None:
        """The first index of `sha` on the line (-1 for "0"; None: not on it), in O(1)."""
        if sha == "0":
            return -1
        return self._at.get(sha)


def range_affects(events: Iterable[GitEvent], line: Lineage) -> bool:
    """OSV's IsVulnerable for one GIT range: walk the events that are ancestors of the pin, in order.

    introduced → affected; fixed → not affected (the fix commit itself is clean);
    last_affected before the pin → not affected; a limit at or before the pin → outside the range.
    Events on commits that are not ancestors of the pin do not apply.
    """
    return affects_at(((evt, line.index(evt.value)) for evt in events), len(line.shas) - 1)


def affects_at(placed: Iterable[tuple[GitEvent, int | None]], pin: int) -> bool:
    """`range_affects` given each event with its index on the pin's line (-1 for "0"; None: not
    on it) and the pin's index: what a caller that knows the positions asks without a Lineage."""
    ordered: list[tuple[int, int, GitEvent]] = []
    for evt, at in placed:
        if evt.event == "limit":
            if evt.value == "*":
                continue
            if at is not None and at >= 0:
                return False
            continue
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
