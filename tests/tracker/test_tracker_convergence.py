"""Convergence under faults (issue 10's proof): every bundled history, served with 30% transient
faults (5xx, 429 with and without Retry-After, dropped connections, bodies cut off, a proxy's HTML
page, slow bodies — the emulator's `chaos_rate`), ends exactly as a fault-free run: the same
revisions, files, changes, estimates, advisories and events, nothing duplicated, nothing failed.
Runs on SQLite and PostgreSQL (the `database_url` fixture); polling rounds are bounded."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from hubwatch.domain.records import RepoId
from hubwatch.hubsim.chaos import KINDS
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import poll_repos
from tests.tracker.store_content import duplicates, store_content

ROUNDS = 60  # each round polls every repo not yet complete once
FAST = {"hub_retries": 2, "breaker_cooldown_s": 0.5, "hub_timeout_s": 10.0, "poll_deadline_s": 30.0}


def _complete(store: Store, sim: Any, repos: list[RepoId]) -> list[RepoId]:
    """The repos whose stored head is upstream's and whose last poll went fine."""
    states = {s.repo: s for s in store.repos.watched()}
    return [r for r in repos if states[r].head_sha == sim.head(str(r)) and states[r].state == "ok"]


def _converge(sim: Any, url: str, rounds: int) -> tuple[Store, int]:
    settings = Settings(database_url=url, hub_endpoint=sim.url, **FAST)
    hub = HubClient.from_settings(settings)
    store = Store.open(url)
    repos = sorted(RepoId.parse(r) for r in sim.state.repos)
    for repo in repos:
        store.watch(repo)
    for used in range(1, rounds + 1):
        left = [r for r in repos if r not in set(_complete(store, sim, repos))]
        if not left:
            return store, used - 1
        poll_repos(left, hub=hub, store=store, settings=settings)
        time.sleep(0.2)  # a 429's RateLimit window (1 s) and an open breaker pass between rounds
    return store, rounds


def test_thirty_percent_faults_end_exactly_as_a_clean_run(
    hubsim_factory: Any, database_url: str, tmp_path: Path
) -> None:
    clean_sim = hubsim_factory(at=None)
    clean, clean_rounds = _converge(clean_sim, f"sqlite:///{tmp_path / 'clean.db'}", 3)
    assert clean_rounds == 1
    expected = store_content(clean.engine)
    clean.close()
    clean_sim.stop()

    sim = hubsim_factory(at=None, faults={"chaos_rate": 0.3, "seed": 10})
    started = time.monotonic()
    faulty, rounds = _converge(sim, database_url, ROUNDS)
    took = time.monotonic() - started
    try:
        assert rounds < ROUNDS, f"not complete after {ROUNDS} rounds: {_complete(faulty, sim, [])}"
        got = store_content(faulty.engine)
        assert duplicates(got) == {t: 0 for t in got}
        for table in expected:
            assert got[table] == expected[table], table
        # The faults were really there: many requests of each kind answered badly, and retried.
        assert sim.state.faults.config.chaos_rate == 0.3 and len(KINDS) == 7
        assert rounds > 1 and took < 60
    finally:
        faulty.close()
