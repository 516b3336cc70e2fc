"""Which advisories affect a pin, by the advisory_events index, no record decoded.

On a linear history (positions 0..n-1, each revision's parent the one just before it) the pin's
line is the revisions at positions 0..pin and a commit's index on it is its position: each range
holds stretches of positions, read once per history version into an interval index
(`storage.heldindex`), and a pin's answer is a stabbing query of it, whatever the depth (whether
the history is linear is checked once per history version too). Any other history walks the
parent links over the stored revisions (`ids_by_lineage`, the reference the fast path is tested
against).
"""

from __future__ import annotations

import sqlalchemy as sa
from hubwatch.storage.advisories.heldindex import LineIndex, Ranges, linear_line, live_ranges
from hubwatch.storage.core.lookup import stored_revisions
from hubwatch.domain.gitrange import Lineage, range_affects
from hubwatch.storage.revisions.ancestry import Ancestry, lineage
from hubwatch.storage.core.versioned import per_version
from hubwatch.storage.core.tables import REVISIONS
from sqlalchemy.engine import Connection

__all__ = ["affecting_ids", "ids_by_lineage", "is_linear", "linear_now"]


def is_linear(conn: Connection, repo_id: int) -> bool:
    """Whether the repo's stored history is one line that positions alone describe: positions
    0..n-1 each held once, and every revision's parent the revision just before (for the first, a
    commit not stored, or none). Then `lineage` of any revision is the revisions up to its
    position. A root placed after others (a history squashed upstream) starts a line of its own."""
    counts = conn.execute(
        sa.select(sa.func.count(), sa.func.count(sa.distinct(REVISIONS.c.position)), sa.func.max(REVISIONS.c.position))
        .where(REVISIONS.c.repo_id == repo_id)
    ).one()
    total, distinct, top = int(counts[0]), int(counts[1]), counts[2]
    if total == 0 or distinct != total or top is None or int(top) != total - 1:
        return False
    rev, par = REVISIONS.alias("rev"), REVISIONS.alias("par")
    parent_is = sa.and_(par.c.repo_id == repo_id, par.c.sha == rev.c.parent_sha)
    right_before = sa.exists().where(parent_is, par.c.position == rev.c.position - 1)
    stored_parent = sa.exists().where(parent_is)
    odd = sa.exists().where(
        rev.c.repo_id == repo_id,
        sa.or_(
            sa.and_(rev.c.parent_sha.is_not(None), ~right_before, sa.or_(rev.c.position != 0, stored_parent)),
            sa.and_(rev.c.parent_sha.is_(None), rev.c.position != 0),
        ),
    )
    return not conn.execute(sa.select(odd)).scalar_one()


def linear_now(conn: Connection, repo_id: int) -> bool:
    """Whether the repo's stored history is linear now: `is_linear`, kept per (repo, history version): every write that can change the history's
    shape (a stored revision, a force-push, a head move, a merge) raises the version
    (storage.summaries), so the check over every revision runs once per version, not per query."""
    return per_version(conn, repo_id, "linear", lambda: (is_linear(conn, repo_id), 1))


def affecting_ids(conn: Connection, repo_id: int, full_sha: str) -> list[str]:
    """The ids (sorted) of the live advisories of the repo whose GIT ranges hold the stored
    revision `full_sha`; exactly what `ids_by_lineage` answers."""
    if not linear_now(conn, repo_id):
        return _ids_on_any_history(conn, repo_id, full_sha)
    line = linear_line(conn, repo_id)
    pin = line.positions.get(full_sha)
    return [] if pin is None else sorted(line.held.held(pin))


def ids_by_lineage(conn: Connection, repo_id: int, full_sha: str) -> list[str]:
    """The same answer by walking parent links over every stored revision and checking every
    live advisory of the repo (any history shape; the reference for `affecting_ids`)."""
    return _affecting(lineage(stored_revisions(conn, repo_id), full_sha), live_ranges(conn, repo_id))


def _ids_on_any_history(conn: Connection, repo_id: int, full_sha: str) -> list[str]:
    """`ids_by_lineage` from what is kept per history version (`storage.versioned`), nothing read:
    the history's lines with an interval index each (`_Lines`), or, where the links loop or the
    lines would be too long together, the links and live ranges for a walk back and range checks."""
    lines, ancestry, ranges = per_version(conn, repo_id, "lineage", lambda: _lineage_inputs(conn, repo_id))
    if lines is not None:
        return lines.affecting(full_sha)
    return _affecting(ancestry.lineage(full_sha), ranges)


class _Lines:
    """A history of several lines (a force-push started a new one from an older commit) as a pin's
    answer needs it: each tip's line, root to tip, indexed (`LineIndex`), and for each revision a
    line it lies on. On links without loops a revision's ancestry is the start of every line
    through it, so its answer is a stabbing query of that line's index (what `range_affects` says
    over its ancestry)."""

    def __init__(self, lines: list[tuple[str, ...]], ranges: Ranges) -> None:
        self._lines = [LineIndex(line, ranges) for line in lines]
        self._where: dict[str, LineIndex] = {}
        for line in self._lines:
            for sha in line.shas:
                self._where.setdefault(sha, line)
        self.size = sum(line.size for line in self._lines)

    def affecting(self, sha: str) -> list[str]:
        line = self._where.get(sha)
        return [] if line is None else sorted(line.held.held(line.positions[sha]))


MAX_LINES_FACTOR = 8  # the lines together at most this many times the stored revisions, or the walk answers


def _lineage_inputs(
    conn: Connection, repo_id: int
) -> tuple[tuple[_Lines | None, Ancestry, Ranges], int]:
    ancestry, ranges = Ancestry(stored_revisions(conn, repo_id)), live_ranges(conn, repo_id)
    lines = _lines_of(ancestry, ranges)
    size = ancestry.size + sum(len(events) for events in ranges.values()) + (0 if lines is None else lines.size)
    return (lines, ancestry, ranges), size


def _lines_of(ancestry: Ancestry, ranges: Ranges) -> _Lines | None:
    """The history's lines (one per tip: a revision no other one leads to), or None when the links
    loop (a revision's ancestry is then not the start of a line through it) or the lines would hold
    more than MAX_LINES_FACTOR times the revisions."""
    shas = ancestry.shas
    parent = {sha: ancestry.parent_of(sha) for sha in shas}
    state: dict[str, int] = {}  # 1: on the walk now, 2: done (its ancestry ends without a loop)
    for start in shas:
        walk = []
        sha: str | None = start
        while sha is not None and sha not in state:
            state[sha] = 1
            walk.append(sha)
            sha = parent[sha]
        if sha is not None and state[sha] == 1:
            return None  # a loop
        for done in walk:
            state[done] = 2
    led_to = {p for p in parent.values() if p is not None}
    lines: list[tuple[str, ...]] = []
    total = 0
    for tip in (sha for sha in shas if sha not in led_to):
        line = ancestry.lineage(tip)
        assert line is not None
        total += len(line.shas)
        if total > MAX_LINES_FACTOR * max(1, len(shas)):
            return None
        lines.append(line.shas)
    return _Lines(lines, ranges)


def _affecting(line: Lineage | None, ranges: Ranges) -> list[str]:
    if line is None:
        return []
    return sorted({adv_id for (adv_id, _), events in ranges.items() if range_affects(events, line)})
