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
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, poll_interval_s=60)
    sim.set_faults(ratelimit_quota=2, ratelimit_window_s=3)
    first = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="w1")
    second = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="w2")
    first()
    sent = requests_seen(sim.state)
    assert sent == 2  # the listing and one head request; that answer said r=0
    assert store.hub_deferred_until() is not None
    second()  # sends nothing:
    assert requests_seen(sim.state) == sent, "the other worker called the hub inside the spent window"
    time.sleep(3.5)  # the window passes
    second()
    assert requests_seen(sim.state) > sent


def test_a_later_deferral_is_never_shortened(store: Any) -> None:
    from datetime import datetime, timedelta, timezone

    at = datetime(2030, 1, 1, tzinfo=timezone.utc)
    assert store.hub_deferred_until() is None
    store.defer_hub(at)
    store.defer_hub(at - timedelta(seconds=30))
    assert store.hub_deferred_until() == at
    store.defer_hub(at + timedelta(seconds=1, microseconds=5))
    assert store.hub_deferred_until() == at + timedelta(seconds=1, microseconds=5)


@pytest.fixture
def stop_before_second_page(hubsim_factory: Any, root: Path) -> Iterator[Any]:
    """An emulator with one commit per page, stopped (port closed) before the second page is asked for."""
    import httpx2
    from huggingface_hub.utils import set_client_factory
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
