"""The revisions' own store (`store.revisions`): a repo's stored history read back and paged,
force-pushes and head moves, estimates and re-derived results; each call one transaction."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from hubwatch.domain.clock import Clock
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, FileRecord, RepoId
from hubwatch.storage.advisories import advisories as adv
from hubwatch.storage.core import lookup
from hubwatch.storage.core.transactions import Transactions
from hubwatch.storage.core.values import EstimatePoint, HistoryEntry, HistoryRestore, HistoryRewrite
from hubwatch.storage.notify.notify import OutboxPolicy
from hubwatch.storage.revisions import history, rederived, revisions, rewrites
from sqlalchemy.engine import Engine

__all__ = ["Revisions"]


class Revisions(Transactions):
    """A repo's stored revisions (`store.revisions`); `Store.save_revision` writes a new one."""

    def __init__(self, engine: Engine, clock: Clock, notify: OutboxPolicy | None) -> None:
        self.engine = engine
        self._clock = clock
        self._notify = notify

    def known_shas(self, repo: RepoId) -> set[str]:
        with self._read() as c:
            return history.known_shas(c, repo)

    def ordered_shas(self, repo: RepoId) -> list[str]:
        """Every stored revision's sha in `history` order (oldest first), without the entries."""
        with self._read() as c:
            return history.ordered_shas(c, repo)

    def stored_among(self, repo: RepoId, shas: Iterable[str]) -> set[str]:
        """Which of `shas` are stored revisions of `repo` (indexed lookups of those alone)."""
        with self._read() as c:
            return history.stored_among(c, repo, shas)

    def snapshot_files(self, repo: RepoId, sha: str) -> tuple[list[FileRecord], dict[str, bytes]]:
        with self._read() as c:
            return history.snapshot_files(c, repo, sha)

    def stored_file(self, repo: RepoId, sha: str, path: str) -> bytes | None:
        """One tracked file's content at the stored revision `sha` (full), e.g. its card; None when not stored."""
        with self._read() as c:
            return history.stored_file(c, repo, sha, path)

    def add_file(self, repo: RepoId, sha: str, record: FileRecord, content: bytes) -> bool:
        """Add a derived file learnt after the stored revision `sha` was (a dataset head's late parquet
        conversion) to its listing, raising the repo's history version; False when the revision is
        not stored or holds that path already (idempotent: the first one added stays)."""
        return self._write(lambda c: revisions.add_file(c, repo, sha, record, content, self._clock()))

    def save_estimate(self, repo: RepoId, sha: str, version: str, data: dict[str, Any]) -> bool:
        """Add or replace the estimate of a stored revision for one estimator version."""
        return self._write(lambda c: revisions.save_estimate(c, repo, sha, version, data, self._clock()))

    def record_rewrite(
        self, repo: RepoId, old_head: str, new_head: str, dropped: Sequence[str], at: datetime,
        advisories: Sequence[AdvisoryRecord] = (),
    ) -> bool:
        """Record a force-push (stored revisions `dropped` from the main branch); when `new_head` is
        stored it becomes `head()`; `advisories` upserted in the same transaction. False when it
        repeats the repo's latest recorded rewrite."""
        return self._write(
            lambda c: rewrites.record_rewrite(c, repo, old_head, new_head, dropped, at, advisories, self._notify)
        )

    def move_head(
        self, repo: RepoId, sha: str, at: datetime | None = None, advisories: Sequence[AdvisoryRecord] = ()
    ) -> bool:
        """Make the stored revision `sha` the head (upstream is back on commits it had dropped); the
        revisions it puts back on the main line are announced to subscribers, dated `at` (now);
        `advisories` upserted in the same transaction when it moves."""
        when = at if at is not None else self._clock()
        return self._write(lambda c: rewrites.move_head(c, repo, sha, when, advisories, self._notify))

    def off_main_branch(self, repo: RepoId) -> frozenset[str]:
        """Stored revisions a force-push dropped that are not ancestors of the head (again)."""
        with self._read() as c:
            return rewrites.off_main_branch(c, repo)

    def rewrites(self, repo: RepoId) -> list[HistoryRewrite]:
        """The repo's recorded force-pushes, oldest first."""
        with self._read() as c:
            return rewrites.rewrites(c, repo)

    def recent_rewrites(
        self, limit: int, repo: RepoId | None = None, org: str | None = None
    ) -> list[HistoryRewrite]:
        """The newest recorded force-pushes (of one repo, one org or all), newest first."""
        with self._read() as c:
            return rewrites.recent_rewrites(c, limit, repo=repo, org=org)

    def restores(self, repo: RepoId) -> list[HistoryRestore]:
        """The repo's recorded restores (commits a force-push dropped, pushed back upstream), oldest first."""
        with self._read() as c:
            return rewrites.restores(c, repo)

    def recent_restores(
        self, limit: int, repo: RepoId | None = None, org: str | None = None
    ) -> list[HistoryRestore]:
        """The newest recorded restores (of one repo, one org or all), newest first."""
        with self._read() as c:
            return rewrites.recent_restores(c, limit, repo=repo, org=org)

    def history_page(
        self, repo: RepoId, *, before: tuple[int, int] | None = None, limit: int = 100
    ) -> tuple[list[HistoryEntry], tuple[int, int] | None]:
        """One page of `repo`'s history, newest first, older than the keyset cursor `before`;
        and the cursor of the next page (None: no older entry). Bounded work at any depth."""
        with self._read() as c:
            return history.entries_page(c, repo, before=before, limit=limit)

    def estimate_series(self, repo: RepoId, points: int | None = None) -> list[EstimatePoint]:
        """The revisions of `repo`, oldest first, with their newest estimate JSON and nothing else
        decoded (no changes): what charts over the whole history plot. With `points`, about that
        many spread evenly over the history (bounded at any depth). One or two indexed queries."""
        with self._read() as c:
            return history.estimate_series(c, repo, points)

    def newer_page(
        self, repo: RepoId, before: tuple[int, int], limit: int = 100
    ) -> tuple[bool, tuple[int, int] | None]:
        """The "newer" link of the keyset page shown with `before`: whether a newer page exists,
        and its `before` cursor (None: it is the newest page). At most `limit` + 1 keys read."""
        with self._read() as c:
            return history.newer_cursor(c, repo, before, limit)

    def revision_count(self, repo: RepoId) -> int:
        """Stored revisions of `repo` (a summary kept at write time: one row read)."""
        with self._read() as c:
            return history.revision_count(c, repo)

    def revision_dates(self, repo: RepoId, shas: Sequence[str]) -> dict[str, datetime]:
        """The commit dates of those of `shas` the repo stores (no entry decoded)."""
        with self._read() as c:
            return history.revision_dates(c, repo, shas)

    def revision_shas(self, repo: RepoId, tip: str | None = None) -> list[str] | None:
        """The repo's main line of stored revisions (or `tip`'s ancestors), oldest → newest;
        None for a repo not stored."""
        with self._read() as c:
            return lookup.revision_shas(c, repo, tip)

    def repos_holding(self, sha: str) -> list[RepoId]:
        """The repos whose stored history holds the commit (a full sha or a unique prefix)."""
        with self._read() as c:
            return adv.repos_holding(c, sha)

    def replace_derived(
        self, repo: RepoId, changes: Mapping[str, Sequence[ChangeRecord]], advisories: Sequence[AdvisoryRecord],
        files: Mapping[str, tuple[FileRecord, bytes]] | None = None,
    ) -> None:
        """Replace a repo's re-derived changes and upsert its re-derived advisories: ONE transaction,
        which first adds `files` (sha → derived file, content: `add_file`) they were derived with."""
        now = self._clock()
        self._write(lambda c: rederived.replace_derived(c, repo, changes, advisories, now, self._notify, files))
