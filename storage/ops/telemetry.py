"""Poll telemetry: record one cycle (`poll_cycles`), the totals `/metrics` shows, and pruning old `poll_runs`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import sqlalchemy as sa
from hubwatch.storage.core.coltypes import checked_utc
from hubwatch.storage.errors import InvalidRecord
from hubwatch.storage.core.tables import POLL_CYCLES, POLL_RUNS
from hubwatch.storage.core.transactions import Transactions
from sqlalchemy.engine import Connection, Engine

__all__ = [
    "PRUNE_BATCH", "CycleReport", "CycleTotals", "Telemetry", "cycle_totals", "live_workers", "prune_poll_runs",
    "record_cycle",
]

_COUNTS = ("repos", "new_revisions", "failures", "rate_limited", "requests_ok", "requests_3xx", "requests_4xx",
           "requests_429", "requests_5xx", "requests_failed")

# The most `poll_runs` rows one prune looks at (and so deletes): one cycle's call stays cheap however
# large the table, and a backlog clears over the next cycles.
PRUNE_BATCH = 10_000


@dataclass(frozen=True)
class CycleReport:
    """What one poll cycle of one worker did."""

    worker: str
    started_at: datetime
    finished_at: datetime
    listing: str  # the models' recently-modified listing: ok, busy, failed, none (not read)
    repos: int = 0
    new_revisions: int = 0
    failures: int = 0
    rate_limited: int = 0  # 429 answers and repos deferred for Retry-After
    requests_ok: int = 0  # 1xx-2xx (before migration 0011: 3xx too)
    requests_3xx: int = 0  # redirects, e.g. a renamed repo's 307
    requests_4xx: int = 0  # 429 excluded
    requests_429: int = 0
    requests_5xx: int = 0
    requests_failed: int = 0  # sent, no answer (connection refused or reset, timeout)
    lag_max_s: float | None = None  # upstream commit date → stored, over this cycle's new revisions
    lag_mean_s: float | None = None
    datasets_listing: str = "none"  # the datasets' listing, the same words (none: no dataset watched)


@dataclass(frozen=True)
class CycleTotals:
    """Sums over every recorded cycle, and the latest cycle (None before the first)."""

    cycles: int
    sums: dict[str, int] = field(default_factory=dict)
    latest: CycleReport | None = None
    lag: tuple[float, float] | None = None  # (max, mean) of the newest cycle that stored revisions


def record_cycle(conn: Connection, report: CycleReport) -> None:
    started = checked_utc(report.started_at, "cycle start")
    finished = checked_utc(report.finished_at, "cycle end")
    if finished < started:
        raise InvalidRecord(f"a poll cycle cannot end ({finished}) before it starts ({started})")
    values = {name: int(getattr(report, name)) for name in _COUNTS}
    if any(v < 0 for v in values.values()):
        raise InvalidRecord(f"poll cycle counts must not be negative: {values}")
    conn.execute(
        sa.insert(POLL_CYCLES).values(
            worker=report.worker[:200], started_at=started, finished_at=finished, listing=report.listing[:16],
            datasets_listing=report.datasets_listing[:16], lag_max_s=report.lag_max_s, lag_mean_s=report.lag_mean_s,
            **values,
        )
    )


def cycle_totals(conn: Connection) -> CycleTotals:
    """Aggregates in SQL (cheap however many cycles), plus the newest cycle's row."""
    sums = conn.execute(
        sa.select(sa.func.count(), *(sa.func.coalesce(sa.func.sum(POLL_CYCLES.c[n]), 0) for n in _COUNTS))
    ).one()
    row = conn.execute(
        sa.select(POLL_CYCLES).order_by(POLL_CYCLES.c.finished_at.desc(), POLL_CYCLES.c.id.desc()).limit(1)
    ).first()
    latest = None
    if row is not None:
        latest = CycleReport(
            worker=row.worker, started_at=row.started_at, finished_at=row.finished_at, listing=row.listing,
            datasets_listing=row.datasets_listing, lag_max_s=row.lag_max_s, lag_mean_s=row.lag_mean_s,
            **{n: int(getattr(row, n)) for n in _COUNTS},
        )
    lag_row = conn.execute(
        sa.select(POLL_CYCLES.c.lag_max_s, POLL_CYCLES.c.lag_mean_s)
        .where(POLL_CYCLES.c.lag_max_s.is_not(None))
        .order_by(POLL_CYCLES.c.finished_at.desc(), POLL_CYCLES.c.id.desc())
        .limit(1)
    ).first()
    lag = (float(lag_row[0]), float(lag_row[1])) if lag_row is not None else None
    return CycleTotals(int(sums[0]), {n: int(v) for n, v in zip(_COUNTS, sums[1:])}, latest, lag)


def live_workers(conn: Connection, since: datetime) -> set[str]:
    """The workers that finished a poll cycle at or after `since` (every cycle is recorded)."""
    since = checked_utc(since, "since")
    rows = conn.execute(sa.select(POLL_CYCLES.c.worker).where(POLL_CYCLES.c.finished_at >= since).distinct())
    return {str(r[0]) for r in rows}


def prune_poll_runs(conn: Connection, before: datetime, limit: int = PRUNE_BATCH) -> int:
    """Delete `poll_runs` rows started before `before`, among the `limit` oldest by id; the count deleted.

    One bounded DELETE: rows are inserted in time order, so the lowest ids (read from the primary
    key) are the oldest; a row out of order is pruned by a later call once the older ones are gone.
    """
    before = checked_utc(before, "prune before")
    if limit < 1:
        raise InvalidRecord(f"prune limit must be ≥ 1, got {limit}")
    oldest = sa.select(POLL_RUNS.c.id).order_by(POLL_RUNS.c.id).limit(limit)
    result = conn.execute(
        sa.delete(POLL_RUNS).where(POLL_RUNS.c.id.in_(oldest), POLL_RUNS.c.started_at < before)
    )
    return int(result.rowcount or 0)


class Telemetry(Transactions):
    """What each poll cycle did (`store.telemetry`): each call is one transaction."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def record_cycle(self, report: CycleReport) -> None:
        self._write(lambda c: record_cycle(c, report))

    def prune_poll_runs(self, before: datetime, limit: int = PRUNE_BATCH) -> int:
        """Delete per-repo poll telemetry started before `before` (at most `limit` rows); the count deleted."""
        return self._write(lambda c: prune_poll_runs(c, before, limit))

    def live_workers(self, since: datetime) -> set[str]:
        """Workers that finished a poll cycle since `since` (to share a cycle's work fairly)."""
        with self._read() as c:
            return live_workers(c, since)

    def cycle_totals(self) -> CycleTotals:
        with self._read() as c:
            return cycle_totals(c)
