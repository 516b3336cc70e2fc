"""The Store: the one object the rest of hubwatch uses to read and write the database."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Self

from hubwatch.storage.advisories import advisories as adv
from hubwatch.storage.advisories import pinpoints
from hubwatch.storage.core import lookup, summaries
from hubwatch.storage.ops import leases, telemetry
from hubwatch.storage.repos import feed, index, renames, repos
from hubwatch.storage.revisions import history, rederived, revisions, rewrites
from hubwatch.storage.ops import stats as agg
from hubwatch.storage.repos.index import IndexFilter
from hubwatch.storage.core.blobs import get_blob
from hubwatch.storage.core.engine import create_engine
from hubwatch.storage.migrate import upgrade_engine
from hubwatch.storage.derivatives.families import Families
from hubwatch.storage.notify.notify import NotifyStore, OutboxPolicy
from hubwatch.storage.advisories.standing_reads import StandingReads
from hubwatch.storage.core.transactions import Transactions
from hubwatch.domain.clock import Clock, system_clock
from hubwatch.domain.pinpoints import PinPoints
from hubwatch.domain.records import (
    AdvisoryRecord,
    ChangeRecord,
    FileRecord,
    Kind,
    RepoId,
    RevisionRecord,
    Severity,
)
from hubwatch.storage.core.summaries import RepoSummary
from hubwatch.storage.core.values import EstimatePoint, FeedItem, HistoryEntry, HistoryRestore, HistoryRewrite, RepoRename, RepoState
from sqlalchemy.engine import Engine

__all__ = ["Store"]


class Store(Transactions):
    """hubwatch's database. Thread-safe: each call runs in its own connection and transaction."""

    def __init__(self, engine: Engine, clock: Clock | None = None, *, notify: OutboxPolicy | None = None) -> None:
        self.engine = engine
        self._clock = clock or system_clock
        self._notify = notify
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

    # -- the features' own stores, on this database ------------------------------------------
    def notify(self, clock: Clock | None = None) -> NotifyStore:
        """Subscriptions and the outbox (`storage.notify`); `clock` dates new subscriptions (by
        default the store's)."""
        return NotifyStore(self.engine, clock or self._clock)

    def families(self, clock: Clock | None = None) -> Families:
        """Base models and their derivatives (`storage.families`); `clock` dates what it writes (by
        default the store's)."""
        return Families(self.engine, clock or self._clock)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- repos ------------------------------------------------------------------------------
    def watch(self, repo: RepoId) -> bool:
        return self._write(lambda c: repos.set_watched(c, repo, True, self._clock()))

    def unwatch(self, repo: RepoId) -> bool:
        return self._write(lambda c: repos.set_watched(c, repo, False, self._clock()))

    def watched(
        self, *, org: str | None = None, offset: int = 0, limit: int | None = None, after: RepoId | None = None
    ) -> list[RepoState]:
        """Watched repos ordered by org/name: all, or one org's, or `limit` of them after the
        keyset cursor `after` (the last repo of the page before) or from `offset`."""
        with self._read() as c:
            return repos.repo_states(c, org=org, offset=offset, limit=limit, after=after)

    def watched_matching(
        self, f: IndexFilter, *, offset: int = 0, limit: int | None = None, after: RepoId | None = None
    ) -> list[RepoState]:
        """Watched repos matching the index's filter (name, org, change kind, severity, date), by
        org/name, `limit` of them from `offset`: one query."""
        with self._read() as c:
            return index.filtered_repos(c, f, offset, limit, after)

    def latest_matching(self, repos_: Sequence[RepoId], f: IndexFilter) -> dict[RepoId, FeedItem]:
        """Each repo's newest revision with a change matching `f` (its kinds, severity, date), with
        all of its changes: three queries, however many repos."""
        with self._read() as c:
            return index.latest_matching(c, repos_, f)

    def watched_count(self) -> int:
        with self._read() as c:
            return agg.watched_count(c)

    def stats(self) -> agg.StoreStats:
        """Repos by poll state, revision and advisory counts, newest poll: aggregate queries only."""
        with self._read() as c:
            return agg.store_stats(c)

    def latest_changes(self, repos_: Sequence[RepoId]) -> dict[RepoId, FeedItem]:
        """Each repo's newest revision with a change (as `recent_changes(1, repo=…)`), in 3 queries:
        the index's query with no filter."""
        with self._read() as c:
            return index.latest_matching(c, repos_, IndexFilter())

    def repo_state(self, repo: RepoId) -> RepoState | None:
        """The state of one repo, watched or not; None when the store has never seen it."""
        with self._read() as c:
            found = repos.repo_states(c, watched_only=False, repo=repo)
        return found[0] if found else None

    def watched_among(self, repos_: Iterable[RepoId]) -> list[RepoState]:
        """The states of those of `repos_` that are watched, by org/name (batched IN-lists)."""
        with self._read() as c:
            return repos.watched_among(c, repos_)

    def mark_due(self, repos_: Iterable[RepoId], now: datetime) -> int:
        """Make those of `repos_` that are watched due at `now` (e.g. the hub listing shows them moved)."""
        return self._write(lambda c: repos.mark_due(c, repos_, now))

    def record_poll(
        self,
        repo: RepoId,
        state: str,
        error: str | None,
        at: datetime,
        *,
        started: datetime | None = None,
        new_revisions: int = 0,
    ) -> None:
        self._write(
            lambda c: repos.record_poll(c, repo, state, error, at, started=started, new_revisions=new_revisions)
        )

    def canonical_id(self, repo: RepoId) -> RepoId | None:
        """`repo` as the store spells it (any spelling or an id before a rename finds it); None when unknown."""
        with self._read() as c:
            return repos.canonical_id(c, repo)

    def first_id(self, repo: RepoId) -> RepoId | None:
        """The id the store first knew `repo` by (ids of advisories and feed entries derive from it)."""
        with self._read() as c:
            return repos.first_id(c, repo)

    def rename_repo(self, old: RepoId, new: RepoId, at: datetime) -> bool:
        """The hub answers `new` for `old`: the repo (history, leases, advisories) takes the id
        `new`, `old` stays an alias; True when a rename was recorded (idempotent; case-only: False)."""
        return self._write(lambda c: renames.rename_repo(c, old, new, at))

    def renames(self, repo: RepoId) -> list[RepoRename]:
        """The repo's recorded renames (found by any of its ids), oldest first."""
        with self._read() as c:
            return renames.repo_renames(c, repo)

    def recent_renames(self, limit: int, repo: RepoId | None = None, org: str | None = None) -> list[RepoRename]:
        """The newest recorded renames (of one repo, one org or all), newest first."""
        with self._read() as c:
            return renames.recent_renames(c, limit, repo=repo, org=org)

    # -- revisions --------------------------------------------------------------------------
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

    def head(self, repo: RepoId) -> RevisionRecord | None:
        with self._read() as c:
            return history.head(c, repo)

    def snapshot_files(self, repo: RepoId, sha: str) -> tuple[list[FileRecord], dict[str, bytes]]:
        with self._read() as c:
            return history.snapshot_files(c, repo, sha)

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

    def history(self, repo: RepoId) -> list[HistoryEntry]:
        with self._read() as c:
            return history.entries(c, repo)

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

    def summary(self, repo: RepoId) -> RepoSummary | None:
        """The repo's summary kept at write time (revision count, history version, head); None
        when the store has never seen it. One row read, however deep the history."""
        with self._read() as c:
            return summaries.repo_summary(c, repo)

    def revision(self, repo: RepoId, sha: str) -> HistoryEntry | None:
        with self._read() as c:
            return history.revision_entry(c, repo, sha)

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

    def blob(self, sha256: str) -> bytes | None:
        with self._read() as c:
            return get_blob(c, sha256)

    # -- advisories -------------------------------------------------------------------------
    def advisories(self, repo: RepoId | None = None, *, newest: int | None = None) -> list[AdvisoryRecord]:
        """The advisories (of `repo`, or all) by published time then id; `newest`: only the last that many."""
        with self._read() as c:
            return adv.list_advisories(c, repo, newest)

    def advisories_to_plan(
        self, repo: RepoId, pairs: Iterable[tuple[str, str | None]], *, open_ones: bool = True
    ) -> list[AdvisoryRecord]:
        """The repo's live records a revision whose changes name the (file, key) `pairs` may close or
        undo (`advise_match.change_keys`): the open ones (unless not `open_ones`) and those sharing a
        pair, by published time then id; read through indexes, only these decoded."""
        with self._read() as c:
            return adv.advisories_to_plan(c, repo, pairs, open_ones)

    def advisory(self, advisory_id: str) -> AdvisoryRecord | None:
        with self._read() as c:
            return adv.get_advisory(c, advisory_id)

    def advisories_affecting(self, repo: RepoId, sha: str) -> list[AdvisoryRecord]:
        with self._read() as c:
            return adv.advisories_affecting(c, repo, sha)

    def advisories_for_commit(self, sha: str) -> list[tuple[RepoId, AdvisoryRecord]]:
        with self._read() as c:
            return adv.advisories_for_commit(c, sha)

    # The id-only twins: matched through the advisory_events index, nothing decoded, so that a
    # caller pages the ids and decodes only the page (`advisories_by_id`).
    def advisories_fixed_at(self, repo: RepoId, full_sha: str) -> list[AdvisoryRecord]:
        """The repo's live advisories with a `fixed` event at the commit (one indexed query)."""
        with self._read() as c:
            return adv.advisories_fixed_at(c, repo, full_sha)

    def advisories_with_id_suffix(self, repo: RepoId, suffix: str, *, withdrawn: bool = False) -> list[AdvisoryRecord]:
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

    def advisory_ids_affecting(self, repo: RepoId, sha: str) -> list[str]:
        with self._read() as c:
            return adv.ids_affecting(c, repo, sha)

    def advisory_ids_for_commit(self, sha: str) -> list[tuple[RepoId, str]]:
        with self._read() as c:
            return adv.ids_for_commit(c, sha)

    def live_advisory_ids(self, repo: RepoId) -> list[str]:
        with self._read() as c:
            return adv.live_ids(c, repo)

    def live_advisory_count(self, repo: RepoId) -> int:
        """How many of the repo's advisories are not withdrawn (one counting query)."""
        with self._read() as c:
            return adv.live_count(c, repo)

    def advisories_by_id(self, ids: Sequence[str]) -> list[AdvisoryRecord]:
        """The stored records of `ids`, by published time then id (ids not stored are left out)."""
        with self._read() as c:
            return adv.records_by_id(c, ids)

    # -- re-derivation (a new advisory model) -----------------------------------------------
    def meta(self, key: str) -> str | None:
        """A named value about the store (`advisory_model`, …); None when never set."""
        with self._read() as c:
            return rederived.get_meta(c, key)

    def set_meta(self, key: str, value: str) -> None:
        self._write(lambda c: rederived.set_meta(c, key, value))

    def defer_hub(self, until: datetime) -> None:
        """No worker calls the hub before `until` (its rate-limit window is spent); one upsert that
        never shortens a later deferral already recorded."""
        self._write(lambda c: rederived.defer_hub(c, until))

    def hub_deferred_until(self) -> datetime | None:
        """Until when every worker defers calling the hub (may be past); None when never recorded."""
        with self._read() as c:
            return rederived.hub_deferred_until(c)

    def replace_derived(
        self, repo: RepoId, changes: Mapping[str, Sequence[ChangeRecord]], advisories: Sequence[AdvisoryRecord]
    ) -> None:
        """Replace a repo's re-derived changes and upsert its re-derived advisories: ONE transaction."""
        now = self._clock()
        self._write(lambda c: rederived.replace_derived(c, repo, changes, advisories, now, self._notify))

    # -- feeds ------------------------------------------------------------------------------
    def recent_changes(
        self,
        limit: int,
        repo: RepoId | None = None,
        org: str | None = None,
        kinds: Iterable[Kind | str] | None = None,
        min_severity: Severity | str | None = None,
    ) -> list[FeedItem]:
        with self._read() as c:
            return feed.recent_changes(c, limit, repo=repo, org=org, kinds=kinds, min_severity=min_severity)
