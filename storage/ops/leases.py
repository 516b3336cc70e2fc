"""Sharing the polling among workers: claim due repos under a lease, renew it, release it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import sqlalchemy as sa
from hubwatch.storage.core.coltypes import checked_utc
from hubwatch.storage.errors import InvalidRecord
from hubwatch.domain.records import RepoId, RepoType
from hubwatch.storage.repos.repos import repo_match, repos_match
from hubwatch.storage.revisions import rederived
from hubwatch.storage.core.tables import REPOS
from hubwatch.storage.core.transactions import Transactions
from hubwatch.storage.core.validate import is_storable
from sqlalchemy.engine import Connection, Engine

__all__ = [
    "Leases", "claim_due", "claim_repo", "due_count", "drop_leases", "mark_all_due", "release", "renew", "renew_many",
    "unlease",
]


def _check(worker_id: str, lease_s: float | None = None) -> None:
    if not isinstance(worker_id, str) or not 0 < len(worker_id) <= 200 or not is_storable(worker_id):
        raise InvalidRecord(f"worker id must be a string of 1 to 200 characters without NUL, got {worker_id!r}")
    if lease_s is not None and lease_s <= 0:
        raise InvalidRecord(f"lease must last more than 0 seconds, got {lease_s!r}")


def claim_due(conn: Connection, worker_id: str, now: datetime, limit: int, lease_s: float) -> list[RepoId]:
    """Lease up to `limit` watched repos that are due and not leased by a live lease.

    Runs in the caller's write transaction: on PostgreSQL the candidate rows are locked with
    FOR UPDATE SKIP LOCKED, so concurrent workers pass over each other's rows instead of
    waiting; on SQLite the transaction was opened with BEGIN IMMEDIATE, which admits one
    writer at a time. Either way the lease is set before the transaction commits.
    """
    _check(worker_id, lease_s)
    now = checked_utc(now, "claim time")
    if limit <= 0:
        return []
    query = (
        sa.select(REPOS.c.id, REPOS.c.org, REPOS.c.name, REPOS.c.repo_type)
        .where(
            REPOS.c.watched.is_(True),
            sa.or_(REPOS.c.next_poll_at.is_(None), REPOS.c.next_poll_at <= now),
            sa.or_(REPOS.c.lease_expires_at.is_(None), REPOS.c.lease_expires_at <= now),
        )
        .order_by(REPOS.c.next_poll_at.is_not(None), REPOS.c.next_poll_at, REPOS.c.id)
        .limit(limit)
    )
    if conn.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True, of=REPOS)
    rows = conn.execute(query).all()
    if not rows:
        return []
    conn.execute(
        sa.update(REPOS)
        .where(REPOS.c.id.in_([r.id for r in rows]))
        .values(lease_owner=worker_id, lease_expires_at=now + timedelta(seconds=lease_s))
    )
    return [RepoId(r.org, r.name, RepoType(r.repo_type)) for r in rows]


def _owned(worker_id: str, repo: RepoId) -> sa.ColumnElement[bool]:
    return sa.and_(repo_match(repo), REPOS.c.lease_owner == worker_id)


def renew(conn: Connection, repo: RepoId, worker_id: str, now: datetime, lease_s: float) -> bool:
    """Extend a live lease held by `worker_id` (heartbeat); False when it was lost or expired."""
    _check(worker_id, lease_s)
    now = checked_utc(now, "renew time")
    result = conn.execute(
        sa.update(REPOS)
        .where(_owned(worker_id, repo), REPOS.c.lease_expires_at > now)
        .values(lease_expires_at=now + timedelta(seconds=lease_s))
    )
    return bool(result.rowcount)


def release(conn: Connection, repo: RepoId, worker_id: str, next_poll_at: datetime | None) -> bool:
    """Clear the lease `worker_id` holds on `repo` and schedule its next poll.

    Returns False (and changes nothing) when the lease is held by someone else, e.g. after it
    expired and another worker claimed the repo.
    """
    _check(worker_id)
    when = checked_utc(next_poll_at, "next poll time") if next_poll_at is not None else None
    result = conn.execute(
        sa.update(REPOS)
        .where(_owned(worker_id, repo))
        .values(lease_owner=None, lease_expires_at=None, next_poll_at=when)
    )
    return bool(result.rowcount)


def claim_repo(conn: Connection, repo: RepoId, worker_id: str, now: datetime, lease_s: float) -> bool:
    """Lease one watched repo whatever its due time (a webhook's poll); False when it is not
    watched or another worker's lease on it is live."""
    _check(worker_id, lease_s)
    now = checked_utc(now, "claim time")
    query = sa.select(REPOS.c.id).where(
        repo_match(repo),
        REPOS.c.watched.is_(True),
        sa.or_(REPOS.c.lease_expires_at.is_(None), REPOS.c.lease_expires_at <= now),
    )
    if conn.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True, of=REPOS)
    row_id = conn.execute(query).scalar_one_or_none()
    if row_id is None:
        return False
    conn.execute(
        sa.update(REPOS)
        .where(REPOS.c.id == row_id)
        .values(lease_owner=worker_id, lease_expires_at=now + timedelta(seconds=lease_s))
    )
    return True


def renew_many(conn: Connection, repos: list[RepoId], worker_id: str, now: datetime, lease_s: float) -> int:
    """Extend every live lease `worker_id` holds among `repos` in one statement (the heartbeat)."""
    _check(worker_id, lease_s)
    now = checked_utc(now, "renew time")
    if not repos:
        return 0
    pairs = [repos_match(repos)]
    result = conn.execute(
        sa.update(REPOS)
        .where(sa.or_(*pairs), REPOS.c.lease_owner == worker_id, REPOS.c.lease_expires_at > now)
        .values(lease_expires_at=now + timedelta(seconds=lease_s))
    )
    return int(result.rowcount)


def unlease(conn: Connection, repos: list[RepoId], worker_id: str) -> int:
    """Drop `worker_id`'s leases on `repos`, keeping their next poll time (claimed but not polled)."""
    _check(worker_id)
    if not repos:
        return 0
    pairs = [repos_match(repos)]
    result = conn.execute(
        sa.update(REPOS)
        .where(sa.or_(*pairs), REPOS.c.lease_owner == worker_id)
        .values(lease_owner=None, lease_expires_at=None)
    )
    return int(result.rowcount)


def drop_leases(conn: Connection, worker_id: str) -> int:
    """Drop every lease `worker_id` holds: a worker (re)starting under a stable id holds none yet,
    so what the store says it holds was left by its previous, crashed run."""
    _check(worker_id)
    result = conn.execute(
        sa.update(REPOS).where(REPOS.c.lease_owner == worker_id).values(lease_owner=None, lease_expires_at=None)
    )
    return int(result.rowcount)


def mark_all_due(conn: Connection, now: datetime, repo_type: RepoType | None = None) -> int:
    """Make every watched repo (of `repo_type`, when given) due at `now` (a listing too busy to
    vouch for what did not move)."""
    now = checked_utc(now, "due time")
    where = [REPOS.c.watched.is_(True), sa.or_(REPOS.c.next_poll_at.is_(None), REPOS.c.next_poll_at > now)]
    if repo_type is not None:
        where.append(REPOS.c.repo_type == RepoType.parse(repo_type).value)
    result = conn.execute(sa.update(REPOS).where(*where).values(next_poll_at=now))
    return int(result.rowcount)


def due_count(conn: Connection, now: datetime) -> int:
    """How many watched repos are due and not leased by a live lease (one indexed count)."""
    now = checked_utc(now, "due time")
    return int(conn.execute(
        sa.select(sa.func.count()).select_from(REPOS).where(
            REPOS.c.watched.is_(True),
            sa.or_(REPOS.c.next_poll_at.is_(None), REPOS.c.next_poll_at <= now),
            sa.or_(REPOS.c.lease_expires_at.is_(None), REPOS.c.lease_expires_at <= now),
        )
    ).scalar_one())


class Leases(Transactions):
    """Which worker polls which repo when, and until when none calls the hub (`store.leases`): each
    call is one transaction."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def claim_due(self, worker_id: str, now: datetime, limit: int, lease_s: float) -> list[RepoId]:
        return self._write(lambda c: claim_due(c, worker_id, now, limit, lease_s))

    def renew(self, repo: RepoId, worker_id: str, now: datetime, lease_s: float) -> bool:
        return self._write(lambda c: renew(c, repo, worker_id, now, lease_s))

    def release(self, repo: RepoId, worker_id: str, next_poll_at: datetime | None) -> bool:
        return self._write(lambda c: release(c, repo, worker_id, next_poll_at))

    def claim_repo(self, repo: RepoId, worker_id: str, now: datetime, lease_s: float) -> bool:
        """Lease one watched repo now, due or not (a webhook's poll); False when leased elsewhere."""
        return self._write(lambda c: claim_repo(c, repo, worker_id, now, lease_s))

    def renew_many(self, repos_: Sequence[RepoId], worker_id: str, now: datetime, lease_s: float) -> int:
        """The heartbeat: extend `worker_id`'s live leases on `repos_` in one statement."""
        return self._write(lambda c: renew_many(c, list(repos_), worker_id, now, lease_s))

    def unlease(self, repos_: Sequence[RepoId], worker_id: str) -> int:
        """Drop `worker_id`'s leases on `repos_`, keeping their next poll times."""
        return self._write(lambda c: unlease(c, list(repos_), worker_id))

    def drop_leases(self, worker_id: str) -> int:
        """Drop every lease `worker_id` holds (a restarted worker under the same id)."""
        return self._write(lambda c: drop_leases(c, worker_id))

    def mark_all_due(self, now: datetime, repo_type: RepoType | None = None) -> int:
        """Make every watched repo (of `repo_type`: that type's listing) due at `now` (one cycle's
        fallback when the listing is too busy)."""
        return self._write(lambda c: mark_all_due(c, now, repo_type))

    def due_count(self, now: datetime) -> int:
        with self._read() as c:
            return due_count(c, now)

    def defer_hub(self, until: datetime) -> None:
        """No worker calls the hub before `until` (its rate-limit window is spent); one upsert that
        never shortens a later deferral already recorded."""
        self._write(lambda c: rederived.defer_hub(c, until))

    def hub_deferred_until(self) -> datetime | None:
        """Until when every worker defers calling the hub (may be past); None when never recorded."""
        with self._read() as c:
            return rederived.hub_deferred_until(c)
