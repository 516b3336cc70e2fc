"""Operations: `/api/v1/identity` (what answers: hubwatch, its version and the API version clients
check), `/healthz` (the database answers, probed off the event loop and the thread pool) and
`/metrics` (Prometheus text)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import threading
import time
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from hubwatch import __version__
from hubwatch.domain.hub_status import TOKEN_KEY, TokenProblem
from hubwatch.feeds.builders.metrics import MetricsSnapshot, prometheus_text
from hubwatch.feeds.coalesce import Tally
from hubwatch.feeds.context import AppContext, get_ctx
from hubwatch.feeds.errors import error_body
from hubwatch.feeds.text import as_utc
from sqlalchemy.exc import SQLAlchemyError

from hubwatch.storage.errors import StorageError

if TYPE_CHECKING:
    from hubwatch.storage import Store

__all__ = ["API_HEADER", "API_VERSION", "FRESH_S", "SERVICE", "HealthProbe", "router"]

router = APIRouter(tags=["ops"])
Ctx = Annotated[AppContext, Depends(get_ctx)]


# The JSON API's version, raised only by a change an existing client cannot read (a field removed or
# changing meaning); added fields and routes keep it. Every answer carries it as API_HEADER.
SERVICE = "hubwatch"
API_VERSION = 1
API_HEADER = "X-Hubwatch-API"

FRESH_S = 1.0  # a probe's answer is reused this long
STALE_S = 5.0  # while another request's probe runs, an answer this old is still given
PROBE_TIMEOUT_S = 5.0  # a probe that has not answered by then: the database is unavailable

_Answer = tuple[int, dict[str, Any]]


class HealthProbe:
    """The database probe behind `/healthz`, answered off the event loop and off the thread pool.

    One probe (an indexed read, and the hub token's state) runs at a time, in a thread of its own:
    never queued behind the deep requests that fill the pool's threads. Its answer is reused for
    FRESH_S; a request that finds it older starts a probe and waits for it (at most
    PROBE_TIMEOUT_S: then 503), and one that finds a probe running gives the answer it has when
    that is under STALE_S old. Thread-safe and not bound to an event loop."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._answer: _Answer | None = None
        self._at = -math.inf
        self._running: concurrent.futures.Future[_Answer] | None = None

    def _probe(self) -> _Answer:
        try:
            self._store.advisories.get("x_HEALTHZ-probe")  # one indexed read: proves the database answers
            # A rejected hub token keeps the app up (pages, feeds and the OSV API serve the store)
            # but polling stopped: 200 with the problem under "hub", so monitors see it without a
            # restart loop.
            problem = TokenProblem.loads(self._store.meta(TOKEN_KEY))
        except (StorageError, SQLAlchemyError) as exc:
            return 503, error_body("unavailable", f"database: {exc}")
        hub: object = "ok" if problem is None else {"status": "token_rejected", **problem.to_json()}
        return 200, {"status": "ok" if problem is None else "degraded", "database": "ok", "hub": hub}

    def _run(self, future: concurrent.futures.Future[_Answer]) -> None:
        try:
            answer = self._probe()
        except BaseException as exc:  # noqa: BLE001 — handed to the waiting request
            future.set_exception(exc)
            raise
        with self._lock:
            self._answer, self._at = answer, time.monotonic()
        future.set_result(answer)

    async def answer(self) -> _Answer:
        now = time.monotonic()
        with self._lock:
            if self._answer is not None and now - self._at < FRESH_S:
                return self._answer
            running = self._running is not None and not self._running.done()
            if running and self._answer is not None and now - self._at < STALE_S:
                return self._answer
            if not running:
                self._running = concurrent.futures.Future()
                threading.Thread(target=self._run, args=(self._running,), name="hubwatch-healthz", daemon=True).start()
            future = self._running
        assert future is not None
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), PROBE_TIMEOUT_S)
        except TimeoutError:
            return 503, error_body("unavailable", f"database: no answer within {PROBE_TIMEOUT_S:.0f} s")


_probes_lock = threading.Lock()


@router.get("/api/v1/identity")
def identity() -> dict[str, Any]:
    """What answers here: `{"service": "hubwatch", "version": <package version>, "api": 1}`, which a
    client (`hubwatch check --server`) checks before it trusts any other answer. No database work."""
    return {"service": SERVICE, "version": __version__, "api": API_VERSION}


@router.get("/healthz")
async def healthz(request: Request) -> JSONResponse:
    """The database answers (200, or 503) and the hub token's state ("degraded" when rejected).

    An `async` route on purpose: it does no database work on the event loop (HealthProbe runs the
    probe in its own thread), so it answers while deep requests hold every thread of the pool. It
    takes no dependency either: FastAPI runs a plain-function dependency (`get_ctx`) in the pool."""
    ctx = get_ctx(request)  # a plain attribute read, on the loop
    with _probes_lock:
        probe = getattr(request.app.state, "healthz_probe", None)
        if not isinstance(probe, HealthProbe):
            probe = HealthProbe(ctx.store)
            request.app.state.healthz_probe = probe
    status, body = await probe.answer()
    return JSONResponse(body, status_code=status)


def _coalescing(request: Request) -> dict[str, int]:
    tally = getattr(request.app.state, "coalesced", None)
    if not isinstance(tally, Tally):
        return {}
    return {"reads_led": tally.led, "reads_shared": tally.shared}


def _notification_counts(ctx: Ctx) -> dict[str, int]:
    counts = ctx.store.notify(ctx.clock).counts()  # one grouped query
    return {k: getattr(counts, k) for k in ("pending", "sent", "failed", "dead", "skipped")}


@router.get("/metrics")
def metrics(request: Request, ctx: Ctx) -> PlainTextResponse:
    stats = ctx.store.repos.stats()  # aggregate queries: cheap however many repos and advisories
    last = stats.last_polled_at
    cycles = ctx.store.telemetry.cycle_totals()  # SQL sums over poll_cycles, and the newest row
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
        last_cycle_listings={"model": latest.listing, "dataset": latest.datasets_listing} if latest else {},
        notifications=_notification_counts(ctx),
        **_coalescing(request),
    )
    return PlainTextResponse(prometheus_text(snapshot), media_type="text/plain; version=0.0.4; charset=utf-8")
