"""A pin's standing as the store answers it, for the web app and `hubwatch check` alike.

On a long linear history the answer comes from the events index (`pinpoints.pin_points`): the
advisories holding the pin and the newest revision no open hazard holds, without reading the
rest of the line or decoding every advisory of the repo. Any other history (a short one, one that
is not one line, a clean revision too far back) is answered from the whole line and every
advisory (`hubwatch.advisories.standing.standing`); both give the same Standing.
"""

from __future__ import annotations

from hubwatch.advisories.standing import (
    LineFacts, Standing, advisory_direction, line_facts, off_the_main_line, standing_of, standing_on,
)
from hubwatch.domain.records import AdvisoryRecord, Direction, RepoId
from hubwatch.storage.advisories import list_advisories
from hubwatch.storage.lookup import resolve_sha, revision_shas
from hubwatch.storage.pinpoints import pin_points
from hubwatch.storage.repos import find_repo
from hubwatch.storage.summaries import repo_summary
from hubwatch.storage.versioned import RECORD_UNITS, per_version
from sqlalchemy.engine import Connection

__all__ = ["main_line_steps", "pin_standing"]


def pin_standing(
    conn: Connection, repo: RepoId, sha: str, ignored: frozenset[str], main_line_only: bool = False
) -> Standing | None:
    """The standing of a pin at `sha` (a full sha or a unique prefix); None when the repo is not stored.

    A stored revision a force-push dropped is read along its own ancestors, unless `main_line_only`:
    then it is not known (not on the main line). Raises AmbiguousRevision for a shared prefix."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return None
    full = resolve_sha(conn, repo_id, sha.lower())
    commit = full if full is not None else sha.lower()

    def open_hazard(record: AdvisoryRecord) -> bool:
        return record.id not in ignored and advisory_direction(record) is Direction.HAZARD

    points = pin_points(conn, repo, commit, open_hazard)
    if points is not None and not (main_line_only and points.dropped):
        found = standing_of(commit, known=points.known, newest=points.newest, here=points.here, clean=points.clean,
                            held_at_clean=points.held_at_clean, ignored=ignored)
        return _back_onto_the_main_line(conn, repo, found, ignored) if points.dropped else found
    read, off = _whole_line(conn, repo, repo_id, commit, full is not None and not main_line_only, ignored)
    return _back_onto_the_main_line(conn, repo, read, ignored) if read is not None and off else read


def _back_onto_the_main_line(conn: Connection, repo: RepoId, own: Standing, ignored: frozenset[str]) -> Standing:
    """A pin off the main line (read along its own) with the main line's revision to move to: the one
    a pin at the head is told to move to, else the head itself (`off_the_main_line`)."""
    summary = repo_summary(conn, repo)
    head_sha = summary.head_sha if summary is not None else None
    head = pin_standing(conn, repo, head_sha, ignored, main_line_only=True) if head_sha is not None else None
    if head is None or not head.known:
        return own  # no main line to move onto
    target = head if head.suggested is None else pin_standing(conn, repo, head.suggested, ignored, main_line_only=True)
    return off_the_main_line(own, target if target is not None and target.known else head)


def _whole_line(
    conn: Connection, repo: RepoId, repo_id: int, commit: str, own_line: bool, ignored: frozenset[str]
) -> tuple[Standing | None, bool]:
    """`pin_standing` from the repo's whole main line and every advisory (any history shape), and
    whether the pin was read off it: with `own_line`, a stored `commit` off the main line is read
    along its own ancestors.

    The main line's facts (`line_facts`: every advisory placed along it) are made once per history
    version (`storage.versioned`), so every later pin of the line is answered without reading the
    line or decoding a record again; a pin off it is read whole each time (a rare page)."""
    facts = per_version(conn, repo_id, "main line", lambda: _main_line(conn, repo))
    if facts is None:
        return None, False
    if own_line and commit not in facts.at:
        # Along its own line, whose facts are kept per history version too (one entry per commit asked):
        # a page, badge or check of a dropped commit asked again reads nothing again.
        own = per_version(conn, repo_id, f"own line {commit}", lambda: _own_line(conn, repo, commit))
        if own is not None:
            return standing_on(own, commit, ignored), True
    return standing_on(facts, commit, ignored), False


def _own_line(conn: Connection, repo: RepoId, commit: str) -> tuple[LineFacts | None, int]:
    line = revision_shas(conn, repo, tip=commit)
    if not line:
        return None, 1
    records = list_advisories(conn, repo, None)
    return line_facts(line, records), len(line) + RECORD_UNITS * len(records)


def main_line_steps(conn: Connection, repo: RepoId, base: str, head: str) -> int | None:
    """Revisions from `base` to `head` (full shas) along the repo's main line (negative: `head` is
    older); None when either is not on it, or the repo is not stored. Read from the main line's
    facts kept per history version, so it costs the same at any depth once made."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return None
    facts = per_version(conn, repo_id, "main line", lambda: _main_line(conn, repo))
    if facts is None:
        return None
    b, h = facts.at.get(base.lower()), facts.at.get(head.lower())
    return None if b is None or h is None else h - b


def _main_line(conn: Connection, repo: RepoId) -> tuple[LineFacts | None, int]:
    line = revision_shas(conn, repo)
    if line is None:
        return None, 1
    records = list_advisories(conn, repo, None)
    return line_facts(line, records), len(line) + RECORD_UNITS * len(records)
