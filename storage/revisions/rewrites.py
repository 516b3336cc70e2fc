"""History rewrites (force-pushes): recorded when seen, listed per repo; the repo's head follows.

A force-push that adds commits is also a change of the first new revision (the tracker attaches
it); one that only removes commits has no revision to carry it, so this table is where it lives.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from hubwatch.storage.advisories.advisories import upsert_advisories
from hubwatch.storage.core.coltypes import checked_utc
from hubwatch.storage.core.idempotent import insert_ignoring
from hubwatch.storage.notify.notify import OutboxPolicy, enqueue_restore, enqueue_rewrite
from hubwatch.storage.errors import InvalidRecord
from hubwatch.domain.records import AdvisoryRecord, RepoId, RepoType, is_commit_sha
from hubwatch.storage.repos.repos import ensure_repo, find_repo, find_revision, in_scope
from hubwatch.storage.core.summaries import bump_versions
from hubwatch.storage.core.tables import HISTORY_RESTORES, HISTORY_REWRITES, REPOS, REVISIONS
from hubwatch.storage.core.values import HistoryRestore, HistoryRewrite
from hubwatch.storage.core.versioned import per_version
from sqlalchemy.engine import Connection

__all__ = ["move_head", "off_main_branch", "recent_restores", "recent_rewrites", "record_rewrite", "restores",
           "rewrites"]


def record_rewrite(
    conn: Connection, repo: RepoId, old_head: str, new_head: str, dropped: Sequence[str], at: datetime,
    advisories: Sequence[AdvisoryRecord] = (), notify: OutboxPolicy | None = None,
) -> bool:
    """Record that upstream moved from `old_head` to `new_head`, dropping `dropped` (stored shas).

    When `new_head` is stored, it becomes the repo's head (a push that only removed commits).
    `advisories` (the caller's records the rewrite changes) are upserted in the same transaction.
    False, writing no rewrite, when the repo's latest rewrite is this same one and the head is
    already `new_head` (a repeated poll). The same rewrite after a restore moves the head back again
    (its row is kept once: the history lists the first time).
    """
    for what, sha in (("old head", old_head), ("new head", new_head), *(("dropped revision", s) for s in dropped)):
        if not is_commit_sha(sha):
            raise InvalidRecord(f"{repo}: {what} {sha!r} is not a 40-hex lowercase commit sha")
    if not dropped:
        raise InvalidRecord(f"{repo}: a history rewrite drops at least one revision")
    at = checked_utc(at, "rewrite time")
    repo_id = ensure_repo(conn, repo, at)
    latest = conn.execute(
        sa.select(HISTORY_REWRITES.c.old_head, HISTORY_REWRITES.c.new_head)
        .where(HISTORY_REWRITES.c.repo_id == repo_id)
        .order_by(HISTORY_REWRITES.c.id.desc())
        .limit(1)
    ).first()
    upsert_advisories(conn, advisories, at)
    new_head_stored = find_revision(conn, repo, new_head) is not None
    head_now = conn.execute(sa.select(REPOS.c.head_sha).where(REPOS.c.id == repo_id)).scalar_one_or_none()
    # a repeated poll of the same rewrite writes nothing; the same rewrite again after upstream had
    # restored the dropped commits (rewound, restored, rewound) moves the head back once more
    moves_head = new_head_stored and head_now != new_head
    if latest is not None and (latest.old_head, latest.new_head) == (old_head, new_head) and not moves_head:
        return False
    # One row per (repo, old head, new head) is a constraint: a concurrent poll that recorded the
    # same rewrite first makes this insert a no-op instead of a duplicate (both dialects).
    inserted = conn.execute(
        insert_ignoring(conn, HISTORY_REWRITES, ["repo_id", "old_head", "new_head"]).values(
            repo_id=repo_id, detected_at=at, old_head=old_head, new_head=new_head, dropped=list(dropped)
        ).returning(HISTORY_REWRITES.c.id)  # a row back only when inserted (psycopg reports rowcount -1 here)
    ).first() is not None
    if new_head_stored:
        conn.execute(sa.update(REPOS).where(REPOS.c.id == repo_id).values(head_sha=new_head))
    if inserted or moves_head:
        bump_versions(conn, [repo_id])  # the main line changed: what derives from it is stale
        # the outbox, same transaction; a push bringing commits is told by its first new revision
        enqueue_rewrite(conn, repo_id, old_head, new_head, dropped, at, notify,
                        brings_commits=not new_head_stored)
    return bool(inserted or moves_head)


def move_head(
    conn: Connection, repo: RepoId, sha: str, at: datetime, advisories: Sequence[AdvisoryRecord] = (),
    notify: OutboxPolicy | None = None,
) -> bool:
    """Make the stored revision `sha` the repo's head (upstream went back to commits it had
    dropped, nothing new); False when `sha` is not stored or is the head already. `advisories`
    (the caller's records the move changes) are upserted in the same transaction when it moves.

    The stored revisions this puts back on the main line (dropped by a recorded force-push, now
    ancestors of the head again) are recorded as a restore (`restores`) and announced in the same
    transaction (`enqueue_restore`), dated `at`."""
    repo_id = find_repo(conn, repo)
    if repo_id is None or find_revision(conn, repo, sha) is None:
        return False
    old_head = conn.execute(sa.select(REPOS.c.head_sha).where(REPOS.c.id == repo_id)).scalar_one_or_none()
    off_before, _ = _off_main_branch(conn, repo_id)  # read afresh: the versioned copy may be older
    result = conn.execute(
        sa.update(REPOS)
        .where(REPOS.c.id == repo_id, REPOS.c.head_sha.is_distinct_from(sha))
        .values(head_sha=sha, history_version=REPOS.c.history_version + 1)
    )
    if not result.rowcount:
        return False
    upsert_advisories(conn, advisories, at)
    if off_before and old_head is not None:
        back = off_before - _off_main_branch(conn, repo_id)[0]
        if back:
            order = conn.execute(
                sa.select(REVISIONS.c.sha).where(REVISIONS.c.repo_id == repo_id, REVISIONS.c.sha.in_(sorted(back)))
                .order_by(REVISIONS.c.position, REVISIONS.c.id)
            ).scalars()
            now = checked_utc(at, "restore time")
            restored = list(order)
            # One row per (repo, old head, new head), as for rewrites: a concurrent poll that recorded
            # the same restore first makes this a no-op, and announces it alone.
            inserted = conn.execute(
                insert_ignoring(conn, HISTORY_RESTORES, ["repo_id", "old_head", "new_head"]).values(
                    repo_id=repo_id, detected_at=now, old_head=str(old_head), new_head=sha, restored=restored
                ).returning(HISTORY_RESTORES.c.id)
            ).first() is not None
            if inserted:
                enqueue_restore(conn, repo_id, str(old_head), sha, restored, now, notify)
    return True


def rewrites(conn: Connection, repo: RepoId) -> list[HistoryRewrite]:
    """The repo's recorded history rewrites, oldest first."""
    return [HistoryRewrite(repo, r.old_head, r.new_head, tuple(r.dropped or ()), r.detected_at)
            for r in _of_repo(conn, HISTORY_REWRITES, repo)]


def restores(conn: Connection, repo: RepoId) -> list[HistoryRestore]:
    """The repo's recorded restores (dropped commits pushed back upstream), oldest first."""
    return [HistoryRestore(repo, r.old_head, r.new_head, tuple(r.restored or ()), r.detected_at)
            for r in _of_repo(conn, HISTORY_RESTORES, repo)]


def recent_rewrites(
    conn: Connection, limit: int, repo: RepoId | None = None, org: str | None = None
) -> list[HistoryRewrite]:
    """The `limit` newest rewrites (of one repo, one org, or all), newest first (for feeds)."""
    return [
        HistoryRewrite(RepoId(r.org, r.name, RepoType(r.repo_type)), r.old_head, r.new_head, tuple(r.dropped or ()), r.detected_at,
                       RepoId.parse(r.first_id) if r.first_id else None)
        for r in _recent(conn, HISTORY_REWRITES, limit, repo, org)
    ]


def recent_restores(
    conn: Connection, limit: int, repo: RepoId | None = None, org: str | None = None
) -> list[HistoryRestore]:
    """The `limit` newest restores (of one repo, one org, or all), newest first (for feeds)."""
    return [
        HistoryRestore(RepoId(r.org, r.name, RepoType(r.repo_type)), r.old_head, r.new_head, tuple(r.restored or ()), r.detected_at,
                       RepoId.parse(r.first_id) if r.first_id else None)
        for r in _recent(conn, HISTORY_RESTORES, limit, repo, org)
    ]


def _of_repo(conn: Connection, table: sa.Table, repo: RepoId) -> Sequence[Any]:
    """The rows of `table` (rewrites or restores) for `repo`, oldest first."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return []
    return conn.execute(sa.select(table).where(table.c.repo_id == repo_id).order_by(table.c.id)).all()


def _recent(conn: Connection, table: sa.Table, limit: int, repo: RepoId | None, org: str | None) -> Sequence[Any]:
    """The `limit` newest rows of `table` (rewrites or restores) in scope, with their repo's names."""
    if limit <= 0:
        return []
    query = (
        sa.select(table, REPOS.c.org, REPOS.c.name, REPOS.c.repo_type, REPOS.c.first_id)
        .join(REPOS, REPOS.c.id == table.c.repo_id)
        .order_by(table.c.detected_at.desc(), table.c.id.desc())
        .where(in_scope(repo, org))
        .limit(limit)
    )
    return conn.execute(query).all()


def off_main_branch(conn: Connection, repo: RepoId) -> frozenset[str]:
    """Stored revisions a recorded force-push dropped that are not (again) ancestors of the head.

    Kept per history version (`storage.versioned`: a recorded rewrite, a moved head and a stored
    revision each raise it), so the model page of a rewritten repo walks its line once per version,
    not per view."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return frozenset()
    return per_version(conn, repo_id, "off main branch", lambda: _off_main_branch(conn, repo_id))


def _off_main_branch(conn: Connection, repo_id: int) -> tuple[frozenset[str], int]:
    rows = conn.execute(sa.select(HISTORY_REWRITES.c.dropped).where(HISTORY_REWRITES.c.repo_id == repo_id))
    dropped = {str(sha) for row in rows for sha in row.dropped or ()}
    if not dropped:
        return frozenset(), 1
    revisions = conn.execute(sa.select(REVISIONS.c.sha, REVISIONS.c.parent_sha).where(REVISIONS.c.repo_id == repo_id))
    parents: dict[str, str | None] = {r.sha: r.parent_sha for r in revisions}
    current = conn.execute(sa.select(REPOS.c.head_sha).where(REPOS.c.id == repo_id)).scalar_one_or_none()
    seen: set[str] = set()
    while current is not None and current in parents and current not in seen:
        seen.add(current)
        current = parents[current]
    gone = frozenset(dropped - seen)
    return gone, 1 + len(gone)
