"""OSV GIT-range semantics along a whole linear history: every pin's answer in one sweep (pure).

One range at one pin (the events, the lineage, `range_affects`) is the domain's
(`hubwatch.domain.gitrange`); this adds the sweeps a standing makes along a line.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from hubwatch.domain.gitrange import GitEvent

__all__ = ["affected_along", "affected_mask"]


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
