"""The Store: the one object the rest of hubwatch uses to read and write the database.

It keeps what several features share (opening the database, watching a repo, storing a revision,
a repo's head, history and summary, blobs, store meta); each feature's own reads and writes sit
behind a small store of its own, reached as an attribute: `store.repos`, `store.revisions`,
`store.advisories`, `store.leases`, `store.telemetry`, and, dated by a caller's clock,
`store.notify(clock)` and `store.derivatives(clock)`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Self

from hubwatch.domain.clock import Clock, system_clock
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, FileRecord, RepoId, RevisionRecord
from hubwatch.storage.advisories.store import Advisories
from hubwatch.storage.core import summaries
from hubwatch.storage.core.blobs import get_blob
from hubwatch.storage.core.engine import create_engine
from hubwatch.storage.core.summaries import RepoSummary
from hubwatch.storage.core.transactions import Transactions
from hubwatch.storage.core.values import HistoryEntry, RepoState
from hubwatch.storage.derivatives.derivatives import Derivatives
from hubwatch.storage.migrate import upgrade_engine
from hubwatch.storage.notify.notify import NotifyStore, OutboxPolicy
from hubwatch.storage.ops import leases, telemetry
from hubwatch.storage.repos import repos
from hubwatch.storage.repos.store import Repos
from hubwatch.storage.revisions import history, rederived, revisions
from hubwatch.storage.revisions.store import Revisions
from sqlalchemy.engine import Engine

__all__ = ["Store"]


class Store(Transactions):
    """hubwatch's database. Thread-safe: each call runs in its own connection and transaction."""

    def __init__(self, engine: Engine, clock: Clock | None = None, *, notify: OutboxPolicy | None = None) -> None:
        self.engine = engine
        self._clock = clock or system_clock
        self._notify = notify
        # the features' own stores, on this database (each call one transaction, as the Store's)
        self.repos = Repos(engine, self._clock)  # the watch list, poll outcomes, renames, feeds' reads
        self.revisions = Revisions(engine, self._clock, notify)  # stored history, rewrites, estimates
        self.advisories = Advisories(engine)  # OSV records and which affect a pin
        self.leases = leases.Leases(engine)  # which worker polls which repo when
        self.telemetry = telemetry.Telemetry(engine)  # what each poll cycle did

    @classmethod
    def open(cls, url: str, clock: Clock | None = None, *, notify: OutboxPolicy | None = None) -> Store:
        """Connect to `url` (sqlite:///… or postgresql://…) and migrate the schema to head.

        `notify` says what each subscription is sent when a revision, a head move or a re-derived
        advisory is stored (`hubwatch.notify.policy.NotifyPolicy`, given by `hubwatch.wiring`);
        without it, storing one while a subscription exists raises NoNotifyPolicy."""
        engine = create_engine(url)
        try:
            upgrade_engine(engine)
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, clock, notify=notify)

    def close(self) -> None:
        self.engine.dispose()

    def notify(self, clock: Clock | None = None) -> NotifyStore:
        """Subscriptions and the outbox (`storage.notify`); `clock` dates new subscriptions (by
        default the store's)."""
        return NotifyStore(self.engine, clock or self._clock)

    def derivatives(self, clock: Clock | None = None) -> Derivatives:
        """Base models and their derivatives (`storage.derivatives`); `clock` dates what it writes (by
        default the store's)."""
        return Derivatives(self.engine, clock or self._clock)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what several features share ------------------------------------------------------
    def watch(self, repo: RepoId) -> bool:
        return self._write(lambda c: repos.set_watched(c, repo, True, self._clock()))

    def unwatch(self, repo: RepoId) -> bool:
        return self._write(lambda c: repos.set_watched(c, repo, False, self._clock()))

    def repo_state(self, repo: RepoId) -> RepoState | None:
        """The state of one repo, watched or not; None when the store has never seen it."""
        with self._read() as c:
            found = repos.repo_states(c, watched_only=False, repo=repo)
        return found[0] if found else None

    def canonical_id(self, repo: RepoId) -> RepoId | None:
        """`repo` as the store spells it (any spelling or an id before a rename finds it); None when unknown."""
        with self._read() as c:
            return repos.canonical_id(c, repo)

    def first_id(self, repo: RepoId) -> RepoId | None:
        """The id the store first knew `repo` by (ids of advisories and feed entries derive from it)."""
        with self._read() as c:
            return repos.first_id(c, repo)

    def save_revision(
        self,
        repo: RepoId,
        revision: RevisionRecord,
        files: Sequence[FileRecord],
        contents: Mapping[str, bytes],
        changes: Sequence[ChangeRecord],
        estimate: tuple[str, dict[str, Any]] | None,
        advisories: Sequence[AdvisoryRecord],
    ) -> bool:
        """Store a revision with everything derived from it, in ONE transaction.

        Returns False, writing nothing, when the revision is already stored (also when a
        concurrent writer stores it first). Any error rolls back all of it.
        """
        now = self._clock()
        try:
            self._write(
                lambda c: revisions.save_revision(
                    c, repo, revision, files, contents, changes, estimate, advisories, now, self._notify
                )
            )
        except revisions.AlreadyStored:
            return False
        return True

    def head(self, repo: RepoId) -> RevisionRecord | None:
        with self._read() as c:
            return history.head(c, repo)

    def history(self, repo: RepoId) -> list[HistoryEntry]:
        with self._read() as c:
            return history.entries(c, repo)

    def revision(self, repo: RepoId, sha: str) -> HistoryEntry | None:
        with self._read() as c:
            return history.revision_entry(c, repo, sha)

    def summary(self, repo: RepoId) -> RepoSummary | None:
        """The repo's summary kept at write time (revision count, history version, head); None
        when the store has never seen it. One row read, however deep the history."""
        with self._read() as c:
            return summaries.repo_summary(c, repo)

    def blob(self, sha256: str) -> bytes | None:
        with self._read() as c:
            return get_blob(c, sha256)

    def meta(self, key: str) -> str | None:
        """A named value about the store (`advisory_model`, …); None when never set."""
        with self._read() as c:
            return rederived.get_meta(c, key)

    def set_meta(self, key: str, value: str) -> None:
        self._write(lambda c: rederived.set_meta(c, key, value))
