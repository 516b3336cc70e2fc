"""Leases and cycles under load (issue 10): short leases kept alive by a heartbeat and free again
after a crash, no lease left behind, webhook polls under the lease, fair shares between live
workers, a busy listing degrading for one cycle only, and per-cycle telemetry."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from hubwatch.domain.records import RepoId
from hubwatch.settings import Settings
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import NewRevisions
from hubwatch.tracker.scheduler import PollCycle

LLAMA = RepoId.parse("meta-llama/Llama-2-7b-hf")
QWEN = RepoId.parse("Qwen/Qwen-7B")


class Clock:
    def __init__(self, step: timedelta = timedelta()) -> None:
        self.offset = timedelta()
        self.step = step

    def __call__(self) -> datetime:
        self.offset += self.step
        return datetime.now(timezone.utc) + self.offset


@pytest.fixture
def hub_requests() -> Iterator[list[str]]:
    """Every HTTP request huggingface_hub sends, as "METHOD path" (via its client factory hook)."""
    import httpx2
    from huggingface_hub.utils import set_client_factory
    from huggingface_hub.utils._http import default_client_factory, hf_request_event_hook

    seen: list[str] = []

    def record(request: httpx2.Request) -> None:
        seen.append(f"{request.method} {request.url.path}")

    set_client_factory(
        lambda: httpx2.Client(
            event_hooks={"request": [hf_request_event_hook, record]}, follow_redirects=True, timeout=None
        )
    )
    try:
        yield seen
    finally:
        set_client_factory(default_client_factory)


def cycle_for(sim: Any, store: Any, clock: Any, worker: str = "w1", **extra: Any) -> PollCycle:
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, poll_interval_s=60, **extra)
    return PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id=worker,
                     clock=clock)


def leases(store: Any) -> dict[RepoId, str | None]:
    return {s.repo: s.lease_owner for s in store.repos.watched()}


def test_a_crashed_workers_leases_are_free_within_one_lease(store: Any) -> None:
    now = datetime.now(timezone.utc)
    store.watch(LLAMA)
    assert store.leases.claim_due("dead", now, 10, 60) == [LLAMA]  # then kill -9: nothing released
    assert store.leases.claim_due("alive", now + timedelta(seconds=59), 10, 60) == []
    assert store.leases.claim_due("alive", now + timedelta(seconds=61), 10, 60) == [LLAMA]
    # A restart under a stable id (`run --worker-id`) takes its own leases back at once.
    assert store.leases.drop_leases("alive") == 1
    assert store.leases.claim_due("alive", now + timedelta(seconds=62), 10, 60) == [LLAMA]


def test_the_heartbeat_keeps_a_long_poll_leased(hubsim_factory: Any, store: Any) -> None:
    sim = hubsim_factory(at=None, faults={"latency_ms": 150})  # a backfill of many slow requests
    store.watch(LLAMA)
    cycle = cycle_for(sim, store, Clock(), lease_s=2)
    runner = threading.Thread(target=cycle)
    runner.start()
    stolen: list[RepoId] = []
    try:
        started = time.monotonic()
        while leases(store)[LLAMA] != "w1" and time.monotonic() - started < 10:
            time.sleep(0.01)
        while runner.is_alive() and time.monotonic() - started < 60:
            stolen += store.leases.claim_due("other", datetime.now(timezone.utc), 10, 2)
            time.sleep(0.2)
    finally:
        runner.join(timeout=60)
        cycle.close()
    assert time.monotonic() - started > 3  # the poll outlived its 2-s lease…
    assert cycle.heartbeat.beats >= 2  # …renewed by the heartbeat, so no one else got it
    assert stolen == []
    assert leases(store)[LLAMA] is None


def test_a_repo_due_again_in_the_same_cycle_is_not_left_leased(hubsim: Any, store: Any) -> None:
    # Each reading of this clock is 7 hours on: a released repo is due again before the cycle ends.
    cycle = cycle_for(hubsim, store, Clock(step=timedelta(hours=7)))
    for repo in (LLAMA, QWEN):
        store.watch(repo)
    outcomes = cycle()
    assert sorted(str(o.repo) for o in outcomes) == sorted([str(LLAMA), str(QWEN)])  # each polled once
    assert leases(store) == {LLAMA: None, QWEN: None}
    cycle.close()


def test_a_webhook_poll_takes_the_lease(hubsim: Any, store: Any) -> None:
    store.watch(LLAMA)
    clock = Clock()
    other = cycle_for(hubsim, store, clock, worker="w2")
    assert store.leases.claim_due("w1", clock(), 10, 60) == [LLAMA]  # w1 is polling it
    assert other.poll_now(LLAMA) is None  # w2's webhook leaves it to w1: no second poll
    assert store.head(LLAMA) is None
    assert store.leases.release(LLAMA, "w1", clock())
    outcome = other.poll_now(LLAMA)
    assert isinstance(outcome, NewRevisions)
    assert leases(store)[LLAMA] is None
    other.close()


def test_live_workers_share_a_cycles_work(hubsim: Any, store: Any) -> None:
    clock = Clock()
    first, second = cycle_for(hubsim, store, clock, "w1", claim_batch=1), cycle_for(hubsim, store, clock, "w2")
    assert first() == [] and second() == []  # both have run a cycle: both are live
    for name in ("meta-llama/Llama-2-7b-hf", "Qwen/Qwen-7B", "THUDM/chatglm-6b", "tiiuae/falcon-7b-instruct"):
        store.watch(RepoId.parse(name))
    assert len(first()) == 2  # its half of the four due; the other worker's cycle takes the rest
    assert len(second()) == 2
    first.close()
    second.close()


def test_a_busy_listing_degrades_for_one_cycle_and_recovers(hubsim: Any, store: Any, hub_requests: list[str]) -> None:
    clock = Clock()
    cycle = cycle_for(hubsim, store, clock)
    for repo in (LLAMA, QWEN):
        store.watch(repo)
    cycle()  # backfill
    hubsim.advance(str(QWEN))
    # 10,050 other models changed an hour ago: more than the listing reads (10,000).
    hubsim.state.busy_listing = (10_050, datetime.now(timezone.utc) - timedelta(hours=1))
    clock.offset += timedelta(seconds=61)
    cycle._since.clear()  # a fresh worker: its first listing reaches back the whole re-check interval
    hub_requests.clear()
    outcomes = cycle()
    assert sum(r == "GET /api/models" for r in hub_requests) == 11  # 10,000 entries and one more: it gives up
    assert {str(o.repo) for o in outcomes} == {str(LLAMA), str(QWEN)}  # every repo: its own head request
    assert any(isinstance(o, NewRevisions) and o.repo == QWEN for o in outcomes)
    # Next cycle: the window reaches back to the busy cycle only, and the listing vouches again.
    clock.offset += timedelta(seconds=61)
    hub_requests.clear()
    assert cycle() == []
    assert hub_requests == ["GET /api/models"]
    totals = store.telemetry.cycle_totals()
    assert totals.latest is not None and totals.latest.listing == "ok"
    cycle.close()


def test_each_cycle_records_its_telemetry(hubsim: Any, store: Any) -> None:
    import sqlalchemy as sa
    from fastapi.testclient import TestClient

    from hubwatch.feeds import create_app

    cycle = cycle_for(hubsim, store, Clock())
    store.watch(LLAMA)
    (outcome,) = cycle()
    assert isinstance(outcome, NewRevisions)
    totals = store.telemetry.cycle_totals()
    latest = totals.latest
    assert totals.cycles == 1 and latest is not None
    assert latest.finished_at > latest.started_at
    assert latest.repos == 1 and latest.new_revisions == len(outcome.shas) and latest.failures == 0
    assert latest.requests_ok >= 3 and latest.requests_5xx == 0
    assert latest.lag_max_s is not None and latest.lag_max_s > 0
    with store.engine.connect() as conn:
        run = conn.execute(sa.text("SELECT started_at, finished_at, new_revisions FROM poll_runs")).one()
    assert run.new_revisions == len(outcome.shas) and run.finished_at != run.started_at
    settings = Settings(database_url="sqlite://", hub_endpoint=hubsim.url)
    text = TestClient(create_app(settings, store)).get("/metrics").text
    assert "hubwatch_poll_cycles_total 1" in text
    assert f"hubwatch_poll_new_revisions_total {len(outcome.shas)}" in text
    assert 'hubwatch_hub_requests_total{status="ok"}' in text and "hubwatch_last_cycle_lag_max_seconds" in text
    # Only a model watched: its listing was read, the datasets' was not.
    assert 'hubwatch_last_cycle_listing{type="model",outcome="ok"} 1\n' in text
    assert 'hubwatch_last_cycle_listing{type="dataset",outcome="none"} 1\n' in text
    cycle.close()
