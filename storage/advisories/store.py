"""The advisories' own store (`store.advisories`): records by id, repo or commit, what a revision
is planned against, and which records affect a pin; each call one transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

from hubwatch.domain.pinpoints import PinPoints
from hubwatch.domain.records import AdvisoryRecord, RepoId
from hubwatch.storage.advisories import advisories as adv
from hubwatch.storage.advisories import pinpoints
from hubwatch.storage.advisories.standing_reads import StandingReads
from hubwatch.storage.core.transactions import Transactions
from sqlalchemy.engine import Engine

__all__ = ["Advisories"]


class Advisories(Transactions):
    """The stored OSV records (`store.advisories`); they are written with the revision, rewrite or
    re-derivation that raised them."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def records(self, repo: RepoId | None = None, *, newest: int | None = None) -> list[AdvisoryRecord]:
        """The advisories (of `repo`, or all) by published time then id; `newest`: only the last that many."""
        with self._read() as c:
            return adv.list_advisories(c, repo, newest)

    def to_plan(
        self, repo: RepoId, pairs: Iterable[tuple[str, str | None]], *, open_ones: bool = True
    ) -> list[AdvisoryRecord]:
        """The repo's live records a revision whose changes name the (file, key) `pairs` may close or
        undo (`advise_match.change_keys`): the open ones (unless not `open_ones`) and those sharing a
        pair, by published time then id; read through indexes, only these decoded."""
        with self._read() as c:
            return adv.advisories_to_plan(c, repo, pairs, open_ones)

    def get(self, advisory_id: str) -> AdvisoryRecord | None:
        with self._read() as c:
            return adv.get_advisory(c, advisory_id)

    def affecting(self, repo: RepoId, sha: str) -> list[AdvisoryRecord]:
        with self._read() as c:
            return adv.advisories_affecting(c, repo, sha)

    def for_commit(self, sha: str) -> list[tuple[RepoId, AdvisoryRecord]]:
        with self._read() as c:
            return adv.advisories_for_commit(c, sha)

    def fixed_at(self, repo: RepoId, full_sha: str) -> list[AdvisoryRecord]:
        """The repo's live advisories with a `fixed` event at the commit (one indexed query)."""
        with self._read() as c:
            return adv.advisories_fixed_at(c, repo, full_sha)

    def with_id_suffix(self, repo: RepoId, suffix: str, *, withdrawn: bool = False) -> list[AdvisoryRecord]:
        """The repo's live advisories (with `withdrawn`, the withdrawn ones too) whose id ends with
        `suffix` (matched in the database; only those decoded)."""
        with self._read() as c:
            return adv.advisories_with_id_suffix(c, repo, suffix, withdrawn=withdrawn)

    def pin_points(
        self, repo: RepoId, full_sha: str, open_hazard: Callable[[AdvisoryRecord], bool]
    ) -> PinPoints | None:
        """A pin's standing inputs from the events index, in one read (`pinpoints.pin_points`);
        None when the whole history answers."""
        with self._read() as c:
            return pinpoints.pin_points(c, repo, full_sha, open_hazard)

    @contextmanager
    def standing_reads(self) -> Iterator[StandingReads]:
        """The reads a pin's standing makes, in one read transaction
        (`hubwatch.advisories.pin_standing.standing_at(store, …)` makes the standing from them)."""
        with self._read() as c:
            yield StandingReads(c)

    def ids_affecting(self, repo: RepoId, sha: str) -> list[str]:
        with self._read() as c:
            return adv.ids_affecting(c, repo, sha)

    def ids_for_commit(self, sha: str) -> list[tuple[RepoId, str]]:
        with self._read() as c:
            return adv.ids_for_commit(c, sha)

    def live_ids(self, repo: RepoId) -> list[str]:
        with self._read() as c:
            return adv.live_ids(c, repo)

    def live_count(self, repo: RepoId) -> int:
        """How many of the repo's advisories are not withdrawn (one counting query)."""
        with self._read() as c:
            return adv.live_count(c, repo)

    def by_id(self, ids: Sequence[str]) -> list[AdvisoryRecord]:
        """The stored records of `ids`, by published time then id (ids not stored are left out)."""
        with self._read() as c:
            return adv.records_by_id(c, ids)
