"""A pin's standing inputs from the advisory events index, on a linear history: what holds the pin, and the newest clean revision.

`pin_points` reads, in one transaction and without the rest of the history, what
`hubwatch.advisories.standing.standing_of` needs (a `hubwatch.domain.pinpoints.PinPoints`): the
advisories holding the pin and the newest revision of its line that no open hazard holds. Histories it does not answer (short ones, any that
is not one line, a clean revision too many steps away) are left to the whole-line reading.
"""

from __future__ import annotations

from collections.abc import Callable

from hubwatch.domain.pinpoints import PinPoints
from hubwatch.domain.records import AdvisoryRecord, RepoId
from hubwatch.storage.advisories.advisories import records_by_id
from hubwatch.storage.advisories.heldindex import linear_line
from hubwatch.storage.advisories.osvmatch import linear_now
from hubwatch.storage.core.summaries import repo_summary
from sqlalchemy.engine import Connection

__all__ = ["MAX_CLEAN_STEPS", "WHOLE_LINE_UP_TO", "pin_points"]

# How many revisions the search for the newest clean one looks at before it gives up (the caller
# then reads the whole line): each look skips every revision the hazards holding it hold.
MAX_CLEAN_STEPS = 64
# Up to this many stored revisions, reading the whole line and every advisory costs less than the
# index's queries (about 0.6 ms against 1.5 ms on SQLite at 12 revisions; 26 ms against 2.7 ms at 3,000).
WHOLE_LINE_UP_TO = 100


def pin_points(
    conn: Connection, repo: RepoId, full_sha: str, open_hazard: Callable[[AdvisoryRecord], bool]
) -> PinPoints | None:
    """The standing inputs of a pin at `full_sha`, from the events index: the advisories holding it
    and, when any does, the newest revision of its line that no advisory `open_hazard` accepts holds.

    None when the whole history answers: a repo not stored, a short one (WHOLE_LINE_UP_TO), one that is
    not one line (`linear_now`), or more than MAX_CLEAN_STEPS looks to find the clean revision. Each look is a
    few indexed queries; from a revision held by open hazards the next look is the one before the
    earliest revision from which they all hold it (`HeldIndex.held`), so a run of held revisions is
    crossed in one step."""
    summary = repo_summary(conn, repo)
    if summary is None or summary.revisions <= WHOLE_LINE_UP_TO or not linear_now(conn, summary.repo_id):
        return None
    repo_id = summary.repo_id
    line = linear_line(conn, repo_id)  # positions and the interval index, kept per history version
    at = line.positions.get(full_sha)
    head = line.positions.get(summary.head_sha) if summary.head_sha is not None else None
    if head is None:  # no recorded head stored: the main line ends at the newest position (`revision_shas`)
        head = len(line.shas) - 1 if line.shas else None
    if head is None:
        return PinPoints(False, None, (), None, frozenset())
    dropped = at is not None and at > head
    top = at if at is not None and dropped else head  # a dropped pin: its own line
    newest = line.sha_at(top)
    if at is None:
        return PinPoints(False, newest, (), None, frozenset())
    pin = at
    held_here = line.held.held(pin)
    here = tuple(records_by_id(conn, sorted(held_here)))
    if not here:
        return PinPoints(True, newest, here, None, frozenset(), dropped)
    records = {r.id: r for r in here}
    look = top
    for _ in range(MAX_CLEAN_STEPS):
        held = held_here if look == pin else line.held.held(look)
        missing = [i for i in held if i not in records]
        records.update((r.id, r) for r in records_by_id(conn, sorted(missing)))
        starts = [start for i, start in held.items() if i in records and open_hazard(records[i])]
        if not starts:
            return PinPoints(True, newest, here, line.sha_at(look), frozenset(held) & {r.id for r in here},
                             dropped)
        look = min(starts) - 1
        if look < 0:
            return PinPoints(True, newest, here, None, frozenset(), dropped)
    return None
