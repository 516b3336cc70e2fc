"""Operations: `/healthz` (the database answers) and `/metrics` (Prometheus text)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse, PlainTextResponse

from hubwatch.domain.hub_status import TOKEN_KEY, TokenProblem
from hubwatch.feeds.builders.metrics import MetricsSnapshot, prometheus_text
from hubwatch.feeds.context import AppContext, get_ctx
from hubwatch.feeds.errors import error_body
from hubwatch.feeds.text import as_utc
from sqlalchemy.exc import SQLAlchemyError

from hubwatch.storage.errors import StorageError

__all__ = ["router"]

router = APIRouter(tags=["ops"])
Ctx = Annotated[AppContext, Depends(get_ctx)]


@router.get("/healthz")
def healthz(ctx: Ctx) -> JSONResponse:
    try:
        ctx.store.advisory("x_HEALTHZ-probe")  # one indexed read: proves the database answers
    except (StorageError, SQLAlchemyError) as exc:
        return JSONResponse(error_body("unavailable", f"database: {exc}"), status_code=503)
    # A rejected hub token keeps the app up (pages, feeds and the OSV API serve the store) but
    # polling stopped: 200 with the problem under "hub", so monitors see it without a restart loop.
    problem = TokenProblem.loads(ctx.store.meta(TOKEN_KEY))
    hub: object = "ok" if problem is None else {"status": "token_rejected", **problem.to_json()}
    return JSONResponse({"status": "ok" if problem is None else "degraded", "database": "ok", "hub": hub})


def _notification_counts(ctx: Ctx) -> dict[str, int]:
    from hubwatch.storage.notify import NotifyStore

    counts = NotifyStore(ctx.store.engine, ctx.clock).counts()  # one grouped query
    return {k: getattr(counts, k) for k in ("pending", "sent", "failed", "dead", "skipped")}


@router.get("/metrics")
def metrics(ctx: Ctx) -> PlainTextResponse:
    stats = ctx.store.stats()  # aggregate queries: cheap however many repos and advisories
    last = stats.last_polled_at
    cycles = ctx.store.cycle_totals()  # SQL sums over poll_cycles, and the newest row
    latest = cycles.latest
    snapshot = MetricsSnapshot(
        repos_by_state=stats.repos_by_state,
        revisions=stats.revisions,
        advisories=stats.advisories,
        last_poll_age_s=(ctx.clock() - as_utc(last)).total_seconds() if last is not None else None,
        cycles=cycles.cycles,
        cycle_sums=cycles.sums,
        last_cycle_duration_s=(latest.finished_at - latest.started_at).total_seconds() if latest else None,
        last_cycle_lag_max_s=cycles.lag[0] if cycles.lag else None,
        last_cycle_lag_mean_s=cycles.lag[1] if cycles.lag else None,
        notifications=_notification_counts(ctx),
    )
    return PlainTextResponse(prometheus_text(snapshot), media_type="text/plain; version=0.0.4; charset=utf-8")
