"""Helpers for tests that run `hubwatch run --no-web` workers as real processes against the emulator."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from hubwatch.domain.records import RepoId
from hubwatch.hubsim.state import SimError
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import poll_repos

__all__ = ["FAST_ENV", "advance_all", "clean_run", "complete", "start_worker", "wait_for"]

# The smallest settings allowed: 10-s cycles, 2-s leases (renewed every 0.67 s), one repo per claim.
FAST_ENV = {"HUBWATCH_POLL_INTERVAL_S": "10", "HUBWATCH_LEASE_S": "2", "HUBWATCH_CLAIM_BATCH": "1",
            "HUBWATCH_RECHECK_INTERVAL_S": "60", "HUBWATCH_SHUTDOWN_GRACE_S": "2"}


def start_worker(sim: Any, db: str, worker_id: str, **env: str) -> subprocess.Popen[bytes]:
    environ = {**os.environ, "HUBWATCH_DATABASE_URL": db, "HUBWATCH_HUB_ENDPOINT": sim.url, **FAST_ENV, **env}
    return subprocess.Popen([sys.executable, "-m", "hubwatch", "run", "--no-web", "--worker-id", worker_id],
                            env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def advance_all(sim: Any) -> int:
    """Reveal every version not yet shown, of every repo; returns how many commits appeared."""
    shown = 0
    for repo in sim.state.repos:
        while True:
            try:
                sim.advance(repo)
            except SimError:
                break
            shown += 1
    return shown


def complete(store: Store, sim: Any) -> bool:
    """Every watched repo stored at upstream's head, last poll fine."""
    return all(s.head_sha == sim.head(str(s.repo)) and s.state == "ok" for s in store.repos.watched())


def wait_for(check: Callable[[], bool], timeout_s: float, every_s: float = 0.25) -> float | None:
    """Seconds until `check()` held, or None after `timeout_s`."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if check():
            return time.monotonic() - started
        time.sleep(every_s)
    return None


def clean_run(sim: Any, url: str, *, then_advance: bool) -> Store:
    """One in-process worker, no faults: every repo polled, then (optionally) all revealed and polled again."""
    settings = Settings(database_url=url, hub_endpoint=sim.url)
    hub = HubClient.from_settings(settings)
    store = Store.open(url)
    repos = sorted(RepoId.parse(r) for r in sim.state.repos)
    for repo in repos:
        store.watch(repo)
    poll_repos(repos, hub=hub, store=store, settings=settings)
    if then_advance:
        advance_all(sim)
        poll_repos(repos, hub=hub, store=store, settings=settings)
    assert complete(store, sim)
    return store
