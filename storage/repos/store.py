"""The repos' own store (`store.repos`): the watch list, poll outcomes, renames, the index page's
and the feeds' reads across repos; each call one transaction."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from hubwatch.domain.clock import Clock
from hubwatch.domain.records import Kind, RepoId, RepoType, Severity
from hubwatch.storage.core.transactions import Transactions
from hubwatch.storage.core.values import FeedItem, RepoRename, RepoState
from hubwatch.storage.ops import stats as agg
from hubwatch.storage.repos import feed, index, renames, repos
from hubwatch.storage.repos.index import IndexFilter
from sqlalchemy.engine import Engine

__all__ = ["Repos"]


class Repos(Transactions):
    """Which repos are watched and how their polls went (`store.repos`)."""

    def __init__(self, engine: Engine, clock: Clock) -> None:
        self.engine = engine
        self._clock = clock

    def watched(
        self, *, org: str | None = None, offset: int = 0, limit: int | None = None, after: RepoId | None = None,
        repo_type: RepoType | None = None,
    ) -> list[RepoState]:
        """Watched repos ordered by org/name: all, or one org's, or `limit` of them after the
        keyset cursor `after` (the last repo of the page before) or from `offset`; only models or
        only datasets with `repo_type`."""
        with self._read() as c:
            return repos.repo_states(c, org=org, offset=offset, limit=limit, after=after, repo_type=repo_type)

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

    def watched_among(self, repos_: Iterable[RepoId]) -> list[RepoState]:
        """The states of those of `repos_` that are watched, by org/name (batched IN-lists)."""
        with self._read() as c:
            return repos.watched_among(c, repos_)

    def watched_types(self) -> set[RepoType]:
        """The repo types (model, dataset) of which at least one repo is watched: one indexed
        statement, not a read of the watch list (the poll cycle reads a type's listing only then)."""
        with self._read() as c:
            return repos.watched_types(c)

    def watched_ids(self, repos_: Iterable[RepoId]) -> dict[RepoId, RepoId]:
        """Which of `repos_` name a watched repo (any spelling, or an id before a rename), each →
        its id as the store spells it: one query for up to 500 ids (a card's `datasets:` list)."""
        with self._read() as c:
            return repos.watched_ids(c, repos_)

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
