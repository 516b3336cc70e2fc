"""Hub requests overlap where the tracker means them to: a snapshot's files, the claimed repos
(`poll_concurrency` at a time), while the circuit breaker still counts every failure. The emulator
reports how many requests it answered at once (`/_sim/state`'s `requests.max_in_flight`)."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from tracker_polling import copy_history

from hubwatch.domain.records import RepoId
from hubwatch.settings import Settings
from hubwatch.tracker.errors import HubUnavailable
from hubwatch.tracker.guard import HubGuard
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import NewRevisions, Unchanged, poll_repo
from hubwatch.tracker.scheduler import PollCycle

LLAMA = RepoId.parse("meta-llama/Llama-2-7b-hf")
REPOS = [RepoId.parse(r) for r in ("meta-llama/Llama-2-7b-hf", "Qwen/Qwen-7B", "THUDM/chatglm-6b",
                                    "tiiuae/falcon-7b-instruct")]  # fmt: skip


def _settings(sim: Any, **extra: Any) -> Settings:
    return Settings(database_url="sqlite://", hub_endpoint=sim.url, poll_interval_s=60, **extra)


def test_a_snapshots_files_are_fetched_together(hubsim_factory: Any, store: Any) -> None:
    sim = hubsim_factory(at="v1", faults={"latency_ms": 150})
    settings = _settings(sim)
    store.watch(LLAMA)
    sim.requests(reset=True)
    outcome = poll_repo(LLAMA, hub=HubClient.from_settings(settings), store=store, settings=settings)
    assert isinstance(outcome, NewRevisions)
    # Llama-2's v1 has config, generation config, tokenizer files and a weight index: fetched at
    # once, not one after another (pybreaker's lock once let one request through at a time).
    assert sim.requests()["max_in_flight"] >= 2


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_claimed_batch_is_polled_poll_concurrency_repos_at_a_time(
    hubsim_factory: Any, store: Any, concurrency: int
) -> None:
    sim = hubsim_factory(at="v1", faults={"latency_ms": 150})
    settings = _settings(sim, poll_concurrency=concurrency, claim_batch=4)
    offset = [timedelta()]
    cycle = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="w",
                      clock=lambda: datetime.now(timezone.utc) + offset[0])  # fmt: skip
    for repo in REPOS:
        store.watch(repo)
    assert all(isinstance(o, NewRevisions) for o in cycle())
    # Past the re-check interval: each repo is one head request, nothing moved.
    offset[0] = timedelta(hours=7)
    sim.requests(reset=True)
    outcomes = cycle()
    assert sorted((o.repo for o in outcomes), key=str) == sorted(REPOS, key=str)
    assert all(isinstance(o, Unchanged) for o in outcomes)
    seen = sim.requests()["max_in_flight"]
    assert seen == 1 if concurrency == 1 else seen >= 2
    # every repo got its next time and no lease is left behind
    states = {s.repo: s for s in store.repos.watched()}
    assert all(states[r].next_poll_at is not None for r in REPOS)


def test_the_emulator_reports_requests_in_flight(hubsim_factory: Any) -> None:
    sim = hubsim_factory(at="v1", faults={"latency_ms": 300})
    url = f"{sim.url}/api/models/{LLAMA}"
    threads = [threading.Thread(target=httpx.get, args=(url,)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    state = httpx.get(f"{sim.url}/_sim/state").json()["requests"]
    assert state["max_in_flight"] == 3 and state["in_flight"] == 0 and state["seen"] >= 3
    assert httpx.get(f"{sim.url}/_sim/state?reset=in_flight").json()["requests"]["max_in_flight"] == 3
    assert httpx.get(f"{sim.url}/_sim/state").json()["requests"]["max_in_flight"] == 0


def test_failures_from_many_threads_still_open_the_breaker() -> None:
    guard = HubGuard("http://hub.invalid", timeout_s=5, retries=0, breaker_failures=5, breaker_cooldown_s=60)
    barrier = threading.Barrier(8)
    raised: list[BaseException] = []

    def failing() -> None:
        barrier.wait()  # all eight fail together, outside the breaker's lock
        raise HubUnavailable("503 from the hub")

    def call() -> None:
        try:
            guard.call(failing, None)
        except BaseException as exc:  # noqa: BLE001 — collected and checked below
            raised.append(exc)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(raised) == 8 and all(isinstance(e, HubUnavailable) for e in raised)
    assert guard.breaker.current_state == "open"
    calls: list[int] = []
    with pytest.raises(HubUnavailable, match="not called"):
        guard.call(lambda: calls.append(1), None)
    assert calls == []  # an open circuit sends nothing


def test_a_success_resets_the_count_from_any_thread() -> None:
    guard = HubGuard("http://hub.invalid", timeout_s=5, retries=0, breaker_failures=3, breaker_cooldown_s=60)

    def failing() -> None:
        raise HubUnavailable("503")

    for _ in range(2):
        with pytest.raises(HubUnavailable):
            guard.call(failing, None)
    done = threading.Thread(target=lambda: guard.call(lambda: "ok", None))
    done.start()
    done.join()
    for _ in range(2):
        with pytest.raises(HubUnavailable, match="503"):
            guard.call(failing, None)
    assert guard.breaker.current_state == "closed"  # 2 + (success) + 2: never 3 in a row


def _fetch_threads() -> set[int]:
    return {t.ident or 0 for t in threading.enumerate() if t.name.startswith("hubwatch-fetch")}


def test_a_snapshot_fetches_parallel_files_at_a_time_on_threads_the_client_keeps(
    hubsim_factory: Any, data_dir: Any, tmp_path: Any
) -> None:
    """Twenty code files of one revision: eight in flight at a time (never all twenty at once, never one
    by one), on fetch threads the client keeps for its next snapshot, which `close` stops."""
    from hubwatch.tracker.hub import _PARALLEL

    repo = RepoId.parse("microsoft/phi-1_5")
    folder = copy_history(data_dir, tmp_path, "microsoft__phi-1_5")
    for i in range(20):
        (folder / "v1" / f"modeling_part{i}.py").write_text(f"PART = {i}\n")
    sim = hubsim_factory(root=tmp_path, at="v1", faults={"latency_ms": 150})
    hub = HubClient.from_settings(_settings(sim, poll_concurrency=4))  # 32 fetch threads: more than 20
    before = _fetch_threads()
    sha = sim.head(str(repo))
    sim.requests(reset=True)
    snapshot = hub.snapshot(repo, sha)
    assert {f"modeling_part{i}.py" for i in range(20)} <= set(snapshot.contents)
    assert snapshot.contents["modeling_part7.py"] == b"PART = 7\n"
    # The emulator counts a request in flight until its answer is sent, a moment after the client has
    # it and starts the next: a few more than eight overlap there, never all twenty.
    assert _PARALLEL <= sim.requests()["max_in_flight"] < 20
    kept = _fetch_threads() - before
    assert 2 <= len(kept) <= _PARALLEL * 4  # started as fetches needed them, up to the client's threads
    hub.snapshot(repo, sha)
    assert _fetch_threads() - before == kept  # the next snapshot ran on the same threads
    hub.close()
    for thread in [t for t in threading.enumerate() if t.ident in kept]:
        thread.join(timeout=10)
    assert not _fetch_threads() & kept
