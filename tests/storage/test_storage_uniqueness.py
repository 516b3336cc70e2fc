"""Rows that must exist once are constraints (issue 10): concurrent writers of one history rewrite
leave one row, on SQLite and PostgreSQL; the insert is idempotent, never an error."""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from typing import Any

import sqlalchemy as sa

from hubwatch.domain.records import RepoId

REPO = RepoId("org", "name")
OLD, NEW, DROPPED = "a" * 40, "b" * 40, "c" * 40


def test_concurrent_polls_record_one_rewrite(store: Any) -> None:
    at = datetime.now(timezone.utc)
    store.watch(REPO)
    barrier = threading.Barrier(8)
    results: list[bool] = []

    def record() -> None:
        barrier.wait()
        results.append(store.revisions.record_rewrite(REPO, OLD, NEW, [DROPPED], at))

    threads = [threading.Thread(target=record) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(results) == [False] * 7 + [True]
    assert len(store.revisions.rewrites(REPO)) == 1


def test_the_constraint_holds_without_the_check(store: Any) -> None:
    from hubwatch.storage.core.idempotent import insert_ignoring
    from hubwatch.storage.core.tables import HISTORY_REWRITES

    at = datetime.now(timezone.utc)
    store.revisions.record_rewrite(REPO, OLD, NEW, [DROPPED], at)
    with store.engine.begin() as conn:
        repo_id = conn.execute(sa.text("SELECT id FROM repos")).scalar_one()
        values = dict(repo_id=repo_id, detected_at=at, old_head=OLD, new_head=NEW, dropped=[DROPPED])
        stmt = insert_ignoring(conn, HISTORY_REWRITES, ["repo_id", "old_head", "new_head"]).values(**values)
        inserted = conn.execute(stmt.returning(HISTORY_REWRITES.c.id)).first()
    assert inserted is None
    assert len(store.revisions.rewrites(REPO)) == 1
