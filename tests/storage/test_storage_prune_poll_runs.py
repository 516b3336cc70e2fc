"""`poll_runs` pruning: one bounded DELETE of rows older than the cut-off (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from hubwatch.domain.records import RepoId
from hubwatch.storage.core.tables import POLL_RUNS

__all__: list[str] = []

T0 = datetime(2024, 1, 1, tzinfo=UTC)
REPO = RepoId.parse("org/model")


def _count(store: Any) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(POLL_RUNS)).scalar_one())


def test_prune_deletes_only_older_rows_in_bounded_batches(store: Any) -> None:
    store.watch(REPO)
    for day in range(10):
        store.repos.record_poll(REPO, "ok", None, T0 + timedelta(days=day))
    assert _count(store) == 10
    cut = T0 + timedelta(days=6)  # days 0..5 are older
    assert store.telemetry.prune_poll_runs(cut, limit=4) == 4  # bounded
    assert store.telemetry.prune_poll_runs(cut, limit=4) == 2
    assert store.telemetry.prune_poll_runs(cut, limit=4) == 0
    with store.engine.connect() as conn:
        kept = sorted(conn.execute(sa.select(POLL_RUNS.c.started_at)).scalars())
    assert len(kept) == 4 and all(t >= cut for t in kept)
    assert store.repos.watched()[0].last_polled_at == T0 + timedelta(days=9)  # the repo's own state is untouched
