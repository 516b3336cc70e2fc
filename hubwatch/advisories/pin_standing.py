"""A pin's standing from what the store reads, for the web app and `hubwatch check` alike.

On a long linear history the answer comes from the store's events index (`StandingReads.pin_points`):
the advisories holding the pin and the newest revision no open hazard holds, without reading the
rest of the line or decoding every advisory of the repo. Any other history (a short one, one that
is not one line, a clean revision too far back) is answered from the whole line and every
advisory (`standing.line_facts`), kept per history version by the store; both give the same
Standing. The reads are the store's (`hubwatch.storage.advisories.standing_reads`), all in one transaction;
what is made of them is decided here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Protocol, TypeVar

from hubwatch.advisories.standing import (
    LineFacts, Standing, advisory_direction, line_facts, off_the_main_line, standing_of, standing_on,
)
from hubwatch.domain.pinpoints import PinPoints
from hubwatch.domain.records import AdvisoryRecord, Direction, RepoId

__all__ = ["StandingReads", "StandingSource", "StandingStore", "main_line_steps", "pin_standing", "standing_at", "steps_along"]

T = TypeVar("T")


class StandingReads(Protocol):
    """What a standing reads, inside one read transaction of the store."""

    def repo_id(self, repo: RepoId) -> int | None:
        """The repo's row id; None when it is not stored."""
        ...

    def full_sha(self, repo_id: int, sha: str) -> str | None:
        """The full sha of the one stored revision matching `sha` (a prefix); raises AmbiguousRevision."""
        ...

    def pin_points(
        self, repo: RepoId, commit: str, open_hazard: Callable[[AdvisoryRecord], bool]
    ) -> PinPoints | None:
        """The pin's standing inputs from the events index; None when the whole line answers."""
        ...

    def head_sha(self, repo: RepoId) -> str | None:
        """The repo's recorded head."""
        ...

    def line(self, repo: RepoId, tip: str | None = None) -> list[str] | None:
        """The main line (or `tip`'s ancestors), oldest first; None when the repo is not stored."""
        ...

    def advisories(self, repo: RepoId) -> list[AdvisoryRecord]:
        """Every advisory of the repo."""
        ...

    def per_version(self, repo_id: int, kind: str, build: Callable[[], tuple[T, int]]) -> T:
        """`build()`'s value (with its size) kept per history version of the repo."""
        ...

    def size_of(self, revisions: int, records: int) -> int:
        """The size units of a value holding `revisions` shas and `records` decoded advisories."""
        ...


class StandingSource(Protocol):
    """What opens `StandingReads` (the store's advisories, `store.advisories`)."""

    def standing_reads(self) -> AbstractContextManager[StandingReads]: ...


class StandingStore(Protocol):
    """A store whose advisories open `StandingReads` (`hubwatch.storage.Store`)."""

    @property
    def advisories(self) -> StandingSource: ...


def standing_at(
    store: StandingStore, repo: RepoId, sha: str, ignored: Iterable[str] = (), *, main_line_only: bool = False
) -> Standing | None:
    """`pin_standing` in one read of `store`."""
    with store.advisories.standing_reads() as reads:
        return pin_standing(reads, repo, sha, frozenset(ignored), main_line_only)


def steps_along(store: StandingStore, repo: RepoId, base: str, head: str) -> int | None:
    """`main_line_steps` in one read of `store`."""
    with store.advisories.standing_reads() as reads:
        return main_line_steps(reads, repo, base, head)


def pin_standing(
    reads: StandingReads, repo: RepoId, sha: str, ignored: frozenset[str], main_line_only: bool = False
) -> Standing | None:
    """The standing of a pin at `sha` (a full sha or a unique prefix); None when the repo is not stored.

    A stored revision a force-push dropped is read along its own ancestors, unless `main_line_only`:
    then it is not known (not on the main line). Raises AmbiguousRevision for a shared prefix."""
    repo_id = reads.repo_id(repo)
    if repo_id is None:
        return None
    full = reads.full_sha(repo_id, sha.lower())
    commit = full if full is not None else sha.lower()

    def open_hazard(record: AdvisoryRecord) -> bool:
        return record.id not in ignored and advisory_direction(record) is Direction.HAZARD

    points = reads.pin_points(repo, commit, open_hazard)
    if points is not None and not (main_line_only and points.dropped):
        found = standing_of(commit, known=points.known, newest=points.newest, here=points.here, clean=points.clean,
                            held_at_clean=points.held_at_clean, ignored=ignored)
        return _back_onto_the_main_line(reads, repo, found, ignored) if points.dropped else found
    read, off = _whole_line(reads, repo, repo_id, commit, full is not None and not main_line_only, ignored)
    return _back_onto_the_main_line(reads, repo, read, ignored) if read is not None and off else read


def _back_onto_the_main_line(reads: StandingReads, repo: RepoId, own: Standing, ignored: frozenset[str]) -> Standing:
    """A pin off the main line (read along its own) with the main line's revision to move to: the one
    a pin at the head is told to move to, else the head itself (`off_the_main_line`)."""
    head_sha = reads.head_sha(repo)
    head = pin_standing(reads, repo, head_sha, ignored, main_line_only=True) if head_sha is not None else None
    if head is None or not head.known:
        return own  # no main line to move onto
    target = head if head.suggested is None else pin_standing(reads, repo, head.suggested, ignored, main_line_only=True)
    return off_the_main_line(own, target if target is not None and target.known else head)


def _whole_line(
    reads: StandingReads, repo: RepoId, repo_id: int, commit: str, own_line: bool, ignored: frozenset[str]
) -> tuple[Standing | None, bool]:
    """`pin_standing` from the repo's whole main line and every advisory (any history shape), and
    whether the pin was read off it: with `own_line`, a stored `commit` off the main line is read
    along its own ancestors.

    The main line's facts (`line_facts`: every advisory placed along it) are made once per history
    version (the store keeps them), so every later pin of the line is answered without reading the
    line or decoding a record again; a pin off it is read whole each time (a rare page)."""
    facts = reads.per_version(repo_id, "main line", lambda: _main_line(reads, repo))
    if facts is None:
        return None, False
    if own_line and commit not in facts.at:
        # Along its own line, whose facts are kept per history version too (one entry per commit asked):
        # a page, badge or check of a dropped commit asked again reads nothing again.
        own = reads.per_version(repo_id, f"own line {commit}", lambda: _own_line(reads, repo, commit))
        if own is not None:
            return standing_on(own, commit, ignored), True
    return standing_on(facts, commit, ignored), False


def _own_line(reads: StandingReads, repo: RepoId, commit: str) -> tuple[LineFacts | None, int]:
    line = reads.line(repo, tip=commit)
    if not line:
        return None, 1
    records = reads.advisories(repo)
    return line_facts(line, records), reads.size_of(len(line), len(records))


def main_line_steps(reads: StandingReads, repo: RepoId, base: str, head: str) -> int | None:
    """Revisions from `base` to `head` (full shas) along the repo's main line (negative: `head` is
    older); None when either is not on it, or the repo is not stored. Read from the main line's
    facts kept per history version, so it costs the same at any depth once made."""
    repo_id = reads.repo_id(repo)
    if repo_id is None:
        return None
    facts = reads.per_version(repo_id, "main line", lambda: _main_line(reads, repo))
    if facts is None:
        return None
    b, h = facts.at.get(base.lower()), facts.at.get(head.lower())
    return None if b is None or h is None else h - b


def _main_line(reads: StandingReads, repo: RepoId) -> tuple[LineFacts | None, int]:
    line = reads.line(repo)
    if line is None:
        return None, 1
    records = reads.advisories(repo)
    return line_facts(line, records), reads.size_of(len(line), len(records))
