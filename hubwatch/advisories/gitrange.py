"""OSV GIT-range semantics over a linear history: a record's events and whether a range holds a pin (pure)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

__all__ = [
    "EVENT_KINDS",
    "GitEvent",
    "Lineage",
    "affected_along",
    "affects_at",
    "affected_mask",
    "git_events",
    "range_affects",
]

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


def affected_along(events: Iterable[GitEvent], shas: Sequence[str]) -> list[bool]:
    """For each i, `range_affects(events, Lineage(shas[:i + 1]))`, with each event placed once.

    `shas` is a linear history oldest → newest; the answer for every pin along it costs
    O(len(shas) × events) instead of a lineage search per pin.
    """
    first: dict[str, int] = {}
    for i, sha in enumerate(shas):
        first.setdefault(sha, i)
    limits: list[int] = []
    placed: list[tuple[int, int, str]] = []
    for evt in events:
        at = -1 if evt.value == "0" else first.get(evt.value)
        if evt.event == "limit":
            if evt.value != "*" and at is not None and at >= 0:
                limits.append(at)
            continue
        if at is None or (at == -1 and evt.event != "introduced"):
            continue
        placed.append((at, 0 if evt.event == "introduced" else 1, evt.event))
    placed.sort(key=lambda t: (t[0], t[1]))
    out: list[bool] = []
    for pin in range(len(shas)):
        affected = False
        if not any(at <= pin for at in limits):
            for at, _, event in placed:
                if at > pin:
                    break
                if event == "introduced":
                    affected = True
                elif event == "fixed" or event == "last_affected" and at < pin:
                    affected = False
        out.append(affected)
    return out


def affected_mask(events: Iterable[GitEvent], first: Mapping[str, int], n: int) -> int:
    """`affected_along` as a bit set (bit i set: a pin at index i is affected), in one sweep.

    `first` maps each sha of the linear history (oldest → newest, `n` long) to its first index.
    Costs O(events) big-integer operations, not O(n × events) steps.
    """
    limit = n
    groups: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for evt in events:
        at = -1 if evt.value == "0" else first.get(evt.value)
        if evt.event == "limit":
            if evt.value != "*" and at is not None and at >= 0:
                limit = min(limit, at)
            continue
        if at is None or (at == -1 and evt.event != "introduced"):
            continue
        groups[at].append((0 if evt.event == "introduced" else 1, evt.event))
    mask, state, filled = 0, False, 0
    for at in sorted(groups):
        ordered = [event for _, event in sorted(groups[at], key=lambda t: t[0])]
        if at >= 0:
            if state and at > filled:
                mask |= ((1 << (at - filled)) - 1) << filled
            here = state
            for event in ordered:  # at the pin itself, last_affected keeps it affected
                here = True if event == "introduced" else False if event == "fixed" else here
            if here:
                mask |= 1 << at
            filled = at + 1
        for event in ordered:
            state = event == "introduced"
    if state and n > filled:
        mask |= ((1 << (n - filled)) - 1) << filled
    return mask & ((1 << limit) - 1)
