"""Aggregate reads for pages over many repos: counts and the latest change of many repos at once,
a fixed number of queries however many repos are tracked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import sqlalchemy as sa
from hubwatch.storage.history import advisory_ids_of, changes_of, revision_record
from hubwatch.domain.records import RepoId
from hubwatch.storage.repos import repos_match
from hubwatch.storage.tables import ADVISORIES, CHANGES, REPOS, REVISIONS
from hubwatch.storage.values import FeedItem
from sqlalchemy.engine import Connection

__all__ = ["StoreStats", "latest_changes", "store_stats", "watched_count"]


@dataclass(frozen=True)
class StoreStats:
    """Counts over the whole store, from aggregate queries (never by loading rows)."""

    repos_by_state: dict[str, int] = field(default_factory=dict)  # watched repos only
    revisions: int = 0
    advisories: int = 0  # withdrawn ones included
    last_polled_at: datetime | None = None  # newest poll of any watched repo

    @property
    def watched(self) -> int:
        return sum(self.repos_by_state.values())


def store_stats(conn: Connection) -> StoreStats:
    by_state = {
        str(state): int(n)
        for state, n in conn.execute(
            sa.select(REPOS.c.state, sa.func.count()).where(REPOS.c.watched.is_(True)).group_by(REPOS.c.state)
        )
    }
    last = conn.execute(
        sa.select(sa.func.max(REPOS.c.last_polled_at)).where(REPOS.c.watched.is_(True))
    ).scalar_one()
    revisions = conn.execute(sa.select(sa.func.count()).select_from(REVISIONS)).scalar_one()
    advisories = conn.execute(sa.select(sa.func.count()).select_from(ADVISORIES)).scalar_one()
    return StoreStats(by_state, int(revisions), int(advisories), last)


def watched_count(conn: Connection) -> int:
    return int(conn.execute(sa.select(sa.func.count()).select_from(REPOS).where(REPOS.c.watched.is_(True))).scalar_one())


def latest_changes(conn: Connection, repos: Sequence[RepoId]) -> dict[RepoId, FeedItem]:
    """For each repo, its newest revision (by commit date, then arrival) that has a change —
    what `recent_changes(1, repo=…)` gives one repo, for all of `repos` in three queries."""
    if not repos:
        return {}
    wanted = repos_match(repos)
    has_change = sa.exists().where(CHANGES.c.revision_id == REVISIONS.c.id)
    ranked = (
        sa.select(
            REVISIONS.c.id.label("rid"),
            sa.func.row_number()
            .over(partition_by=REVISIONS.c.repo_id, order_by=(REVISIONS.c.date.desc(), REVISIONS.c.id.desc()))
            .label("rank"),
        )
        .join(REPOS, REPOS.c.id == REVISIONS.c.repo_id)
        .where(wanted, has_change)
        .subquery()
    )
    rows = conn.execute(
        sa.select(REVISIONS, REPOS.c.org, REPOS.c.name, REPOS.c.first_id)
        .join(REPOS, REPOS.c.id == REVISIONS.c.repo_id)
        .join(ranked, ranked.c.rid == REVISIONS.c.id)
        .where(ranked.c.rank == 1)
    ).all()
    ids = [r.id for r in rows]
    changes = changes_of(conn, ids)
    advisories = advisory_ids_of(conn, ids)
    return {
        RepoId(r.org, r.name): FeedItem(
            repo=RepoId(r.org, r.name),
            revision=revision_record(r),
            changes=changes.get(r.id, []),
            advisory_ids=advisories.get(r.id, []),
            origin=RepoId.parse(r.first_id) if r.first_id else None,
        )
        for r in rows
    }
