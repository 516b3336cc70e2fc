"""Aggregate reads for pages over many repos: counts by poll state, revisions and advisories, in a
fixed number of queries however many repos are tracked (the latest change of many repos is storage.index)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import sqlalchemy as sa
from hubwatch.storage.core.tables import ADVISORIES, REPOS, REVISIONS
from sqlalchemy.engine import Connection

__all__ = ["StoreStats", "store_stats", "watched_count"]


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
