"""Which advisory ranges hold a position of a linear history: an interval index per (repo, history version).

On a linear history a range's answer at position p (`affects_at` with the events at or before p
on the line) changes only at its events' positions (and one past a `last_affected`), so each range
holds a few stretches [lo, hi) of positions, each with the position from which it holds them all
(its last `introduced` at or before them). The stretches of every live advisory of a repo are read
once per history version (every write that can change them, a stored revision or an upserted or
withdrawn advisory, raises it: `storage.summaries`) into an interval index (`HeldIndex`): a stabbing
query then costs O(log n) per stretch found, whatever the depth, where reading the events for each
query costs O(n).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence

import sqlalchemy as sa
from hubwatch.domain.gitrange import GitEvent, affects_at
from hubwatch.storage.core.tables import ADVISORIES, ADVISORY_EVENTS, REVISIONS
from hubwatch.storage.core.versioned import per_version
from sqlalchemy.engine import Connection

__all__ = ["HeldIndex", "LineIndex", "Ranges", "linear_line", "live_ranges", "stretches"]

OPEN = 1 << 62  # the end of a stretch that lasts to the end of the line

Placed = list[tuple[GitEvent, int | None]]  # a range's events, each with its commit's position (None: not stored)


def stretches(placed: Placed) -> list[tuple[int, int, int]]:
    """The positions of a linear line where the range holds a pin, as (lo, hi, start) stretches,
    hi exclusive: `affects_at` at every pin from lo to hi − 1, with `start` its last `introduced` at or
    before the pin (0 for "0"), which is the same across a stretch."""
    simple = _introduced_then_fixed(placed)
    if simple is not None:
        return simple
    cuts = {0}
    for evt, at in placed:
        if at is not None and at >= 0 and evt.value != "0":
            cuts.add(at)
            if evt.event == "last_affected":
                cuts.add(at + 1)
    ordered = sorted(cuts)
    out: list[tuple[int, int, int]] = []
    for i, pin in enumerate(ordered):
        on_line = [(evt, -1 if evt.value == "0" else at if at is not None and at <= pin else None) for evt, at in placed]
        if not affects_at(on_line, pin):
            continue
        start = max(0, max((at for evt, at in on_line if evt.event == "introduced" and at is not None), default=0))
        hi = ordered[i + 1] if i + 1 < len(ordered) else OPEN
        if out and out[-1][1] == pin and out[-1][2] == start:
            out[-1] = (out[-1][0], hi, start)  # the same stretch goes on
        else:
            out.append((pin, hi, start))
    return out


def _introduced_then_fixed(placed: Placed) -> list[tuple[int, int, int]] | None:
    """`stretches` of the range hubwatch writes (one `introduced`, at most one `fixed`, nothing else)
    without walking the events at each cut; None for any other range."""
    if len(placed) > 2:
        return None
    intro = fix = None
    for evt, at in placed:
        if evt.event == "introduced" and intro is None:
            intro = -1 if evt.value == "0" else at
        elif evt.event == "fixed" and fix is None:
            fix = None if evt.value == "0" else at
        else:
            return None
    if len(placed) == 2 and (intro is None or fix is None):
        return None  # an event not on the line: the walk decides
    if intro is None:
        return []  # never introduced on the line
    lo = max(intro, 0)
    if fix is None or fix < intro:  # never fixed after it: held from its introduction on
        return [(lo, OPEN, lo)]
    return [(lo, fix, lo)] if fix > lo else []


class HeldIndex:
    """The stretches of every live advisory range of one repo version, for stabbing queries: sorted
    by `lo`, over a tree of the largest `hi` of each span of them, so that a query visits only the
    branches holding a stretch that reaches past the pin (O(log n) per stretch found)."""

    def __init__(self, items: list[tuple[int, int, str, int]]) -> None:
        self._items = sorted(items)
        self._los = [item[0] for item in self._items]
        size = 1
        while size < len(self._items):
            size *= 2
        tree = [-1] * (2 * size)
        tree[size : size + len(self._items)] = [item[1] for item in self._items]
        for k in range(size - 1, 0, -1):
            tree[k] = max(tree[2 * k], tree[2 * k + 1])
        self._size, self._tree = size, tree
        self.size = len(self._items)

    def held(self, pin: int) -> dict[str, int]:
        """The advisories holding the pin at `pin`, each with the least start of its ranges that do
        (the position from which that range holds every pin up to this one)."""
        out: dict[str, int] = {}
        end = bisect_right(self._los, pin)  # the stretches from the first `end` start at or before the pin
        tree, size, items = self._tree, self._size, self._items
        stack = [(1, 0, size)]
        while stack:
            node, first, past = stack.pop()
            if first >= end or tree[node] <= pin:
                continue  # none of them starts by the pin, or none reaches past it
            if node >= size:
                _, _, adv_id, start = items[node - size]
                out[adv_id] = min(start, out.get(adv_id, start))
                continue
            middle = (first + past) // 2
            stack.append((2 * node + 1, middle, past))
            stack.append((2 * node, first, middle))
        return out


Ranges = dict[tuple[str, int], list[GitEvent]]  # (advisory id, range index) → its events


class LineIndex:
    """One line of stored revisions (oldest first) as reads use it: the sha at each index, each
    sha's index, and the interval index (`HeldIndex`) of the advisory ranges placed along it."""

    def __init__(self, shas: Sequence[str], ranges: Ranges) -> None:
        self.shas = tuple(shas)
        self.positions = {sha: i for i, sha in enumerate(self.shas)}
        place = self.positions.get  # "0" is no sha: not placed, as `stretches` expects
        self.held = HeldIndex([(lo, hi, adv_id, start) for (adv_id, _), events in ranges.items()
                               for lo, hi, start in stretches([(e, place(e.value)) for e in events])])
        self.size = len(self.shas) + self.held.size

    def sha_at(self, position: int) -> str | None:
        return self.shas[position] if 0 <= position < len(self.shas) else None


def linear_line(conn: Connection, repo_id: int) -> LineIndex:
    """A linear history's line (its revisions by position) and index at its history version now,
    read and built on the first ask of a version (`storage.versioned`); only for a linear history
    (`osvmatch.linear_now`), where a revision's position is its index on the line."""
    return per_version(conn, repo_id, "linear line", lambda: _line(conn, repo_id))


def _line(conn: Connection, repo_id: int) -> tuple[LineIndex, int]:
    rows = conn.execute(
        sa.select(REVISIONS.c.sha).where(REVISIONS.c.repo_id == repo_id).order_by(REVISIONS.c.position)
    )
    line = LineIndex([sha for (sha,) in rows], live_ranges(conn, repo_id))
    return line, line.size


def live_ranges(conn: Connection, repo_id: int) -> Ranges:
    """The GIT ranges of the repo's live advisories, each with its events."""
    rows = conn.execute(
        sa.select(ADVISORY_EVENTS)
        .join(ADVISORIES, ADVISORIES.c.id == ADVISORY_EVENTS.c.advisory_id)
        .where(ADVISORIES.c.repo_id == repo_id, ADVISORIES.c.withdrawn.is_(None))
    )
    ranges: Ranges = defaultdict(list)
    for r in rows:
        ranges[(r.advisory_id, r.range_index)].append(GitEvent(r.range_index, r.ordinal, r.event, r.value))
    return ranges
