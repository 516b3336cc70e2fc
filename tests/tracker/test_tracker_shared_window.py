"""Issue 10: one rate-limit window for every worker on the store; no sleeping in the library on
connect failures. Emulator over HTTP with the official client; nothing is patched."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hubwatch.domain.records import RepoId
from hubwatch.hubsim import demo_root
from hubwatch.hubsim.modes import requests_seen
from hubwatch.settings import Settings
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import Failed, poll_repos
from hubwatch.tracker.scheduler import PollCycle

__all__: list[str] = []

LLAMA = RepoId.parse("meta-llama/Llama-2-7b-hf")
TINY = RepoId.parse("hubsim-test/tiny-llama")


@pytest.fixture
def root(tmp_path: Path, data_dir: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    for source in (demo_root() / "meta-llama__Llama-2-7b-hf", data_dir / "hubsim" / "hubsim-test__tiny-llama"):
        (folder / source.name).symlink_to(source.resolve(), target_is_directory=True)
    return folder


def test_a_spent_window_seen_by_one_worker_stops_the_other(hubsim_factory: Any, root: Path, store: Any) -> None:
    sim = hubsim_factory(root=root, at="v1")
    for repo in (LLAMA, TINY):
        store.watch(repo)
    # One repo at a time, so that the count is exact: with `poll_concurrency` N, up to N − 1 head
    # requests already on their way when the window's last answer arrives reach the hub too (429s,
    # deferrals).
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, poll_interval_s=60, poll_concurrency=1)
    sim.set_faults(ratelimit_quota=2, ratelimit_window_s=3)
    first = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="w1")
    second = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="w2")
    first()
    sent = requests_seen(sim.state)
    assert sent == 2  # the listing and one head request; that answer said r=0
    assert store.leases.hub_deferred_until() is not None
    second()  # sends nothing:
    assert requests_seen(sim.state) == sent, "the other worker called the hub inside the spent window"
    time.sleep(3.5)  # the window passes
    second()
    assert requests_seen(sim.state) > sent


def test_a_later_deferral_is_never_shortened(store: Any) -> None:
    from datetime import datetime, timedelta, timezone

    at = datetime(2030, 1, 1, tzinfo=timezone.utc)
    assert store.leases.hub_deferred_until() is None
    store.leases.defer_hub(at)
    store.leases.defer_hub(at - timedelta(seconds=30))
    assert store.leases.hub_deferred_until() == at
    store.leases.defer_hub(at + timedelta(seconds=1, microseconds=5))
    assert store.leases.hub_deferred_until() == at + timedelta(seconds=1, microseconds=5)


@pytest.fixture
def stop_before_second_page(hubsim_factory: Any, root: Path) -> Iterator[Any]:
    """An emulator with one commit per page, stopped (port closed) before the second page is asked for."""
    import httpx2
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils._http import default_client_factory, hf_request_event_hook

    sim = hubsim_factory(root=root, at=None, page_size=1)
    pages: list[str] = []

    def stop_mid_listing(request: httpx2.Request) -> None:
        if "/commits/" in request.url.path:
            pages.append(str(request.url))
            if len(pages) == 2:
                sim.stop()

    set_client_factory(
        lambda: httpx2.Client(
            event_hooks={"request": [hf_request_event_hook, stop_mid_listing]}, follow_redirects=True, timeout=None
        )
    )
    try:
        yield sim
    finally:
        set_client_factory(default_client_factory)


def test_a_connect_failure_mid_listing_fails_fast(stop_before_second_page: Any, store: Any) -> None:
    sim = stop_before_second_page
    store.watch(LLAMA)
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, poll_interval_s=60, hub_timeout_s=30)
    began = time.monotonic()
    (outcome,) = poll_repos([LLAMA], hub=HubClient.from_settings(settings), store=store, settings=settings)
    took = time.monotonic() - began
    assert isinstance(outcome, Failed) and "could not reach the hub" in outcome.reason, outcome
    assert took < 5, f"a refused connection held the poll {took:.1f} s (huggingface_hub sleeps 23 s retrying it)"


def test_a_one_shot_poll_honours_a_window_another_worker_found_spent(
    hubsim_factory: Any, root: Path, tmp_path: Path
) -> None:
    """`hubwatch poll` (cron) inside the shared window sends nothing, counts no failure and exits 3."""
    import os
    import subprocess
    import sys
    from datetime import datetime, timedelta, timezone

    from hubwatch.storage import Store

    sim = hubsim_factory(root=root, at="v1")
    db = f"sqlite:///{tmp_path / 'cron.db'}"
    store = Store.open(db)
    try:
        for repo in (LLAMA, TINY):
            store.watch(repo)
        store.leases.defer_hub(datetime.now(timezone.utc) + timedelta(seconds=120))  # as a daemon's worker records it
        env = {**os.environ, "HUBWATCH_DATABASE_URL": db, "HUBWATCH_HUB_ENDPOINT": sim.url, "HF_TOKEN": ""}
        run = subprocess.run([sys.executable, "-m", "hubwatch", "poll"], env=env, capture_output=True, text=True,
                             timeout=120)  # fmt: skip
        assert requests_seen(sim.state) == 0, "the one-shot poll called a hub whose window is spent"
        assert run.returncode == 3, (run.stdout, run.stderr)
        lines = run.stdout.splitlines()
        assert sorted(line.split()[:2] for line in lines if line.strip()) == [
            ["deferred", f"{TINY}:"], ["deferred", f"{LLAMA}:"]], run.stdout
        assert "rate limit deferred 2 of 2 repos" in run.stderr and "fix:" in run.stderr, run.stderr
        for state in store.repos.watched():
            assert (state.state, state.failures, state.last_error) == ("new", 0, None), state
        store.leases.defer_hub(datetime.now(timezone.utc))  # cannot shorten it: the window stays until it passes
    finally:
        store.close()


def test_a_429_defers_the_repo_without_counting_a_failure(hubsim_factory: Any, root: Path, store: Any) -> None:
    from datetime import datetime, timedelta, timezone

    from hubwatch.domain.records import PollState

    sim = hubsim_factory(root=root, at="v1")
    store.watch(LLAMA)
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, poll_interval_s=60)
    now = [datetime(2030, 1, 1, tzinfo=timezone.utc)]

    def cycle() -> list[Any]:  # a fresh client each time (its own gate stays shut for the real 30 s)
        hub = HubClient.from_settings(settings)
        return PollCycle(hub=hub, store=store, settings=settings, worker_id="w", clock=lambda: now[0])()

    for round_ in range(3):  # every poll of the repo meets a 429 with Retry-After 30
        sim.set_faults(rate_limit=1, retry_after=30, rate_limit_path=f"/api/models/{LLAMA}*")
        (outcome,) = cycle()
        state = store.repo_state(LLAMA)
        assert isinstance(outcome, Failed) and outcome.deferred and 29 <= (outcome.retry_after or 0) <= 30, outcome
        assert (state.state, state.failures, state.last_error) == (PollState.NEW, 0, None), (round_, state)
        wait = (state.next_poll_at - now[0]).total_seconds()
        assert 29 <= wait <= 30, (round_, wait)  # Retry-After each time, not a growing backoff
        now[0] = state.next_poll_at + timedelta(seconds=1)
    sim.set_faults()
    (outcome,) = cycle()
    assert not isinstance(outcome, Failed) and store.repo_state(LLAMA).state == PollState.OK
    with store.engine.connect() as conn:
        import sqlalchemy as sa

        failures = conn.execute(sa.text("SELECT sum(failures), sum(rate_limited) FROM poll_cycles")).one()
    assert int(failures[0]) == 0 and int(failures[1]) >= 3, failures  # three deferrals, none of them a failure
