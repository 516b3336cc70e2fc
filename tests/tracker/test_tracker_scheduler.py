"""Poll cycles: due repos claimed by lease, released with their next time, shared by workers;
an unchanged cycle costs one listing request per repo type watched, not one request per repo."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from hubwatch.settings import Settings
from hubwatch.domain.records import RepoId
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import NewRevisions, Unchanged
from hubwatch.tracker.scheduler import PollCycle, Scheduler

LLAMA = RepoId.parse("meta-llama/Llama-2-7b-hf")
QWEN = RepoId.parse("Qwen/Qwen-7B")
CHATGLM = RepoId.parse("THUDM/chatglm-6b")
FALCON = RepoId.parse("tiiuae/falcon-7b-instruct")


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


class Clock:
    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(timezone.utc) + self.offset


def cycle_for(sim: Any, store: Any, clock: Clock, worker: str = "w1") -> PollCycle:
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, poll_interval_s=60)
    return PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id=worker, clock=clock)


def test_cycle_polls_due_repos_and_schedules_the_next(hubsim_factory: Any, store: Any, hub_requests: list[str]) -> None:
    sim = hubsim_factory(at="v1")
    clock = Clock()
    cycle = cycle_for(sim, store, clock)
    for repo in (LLAMA, QWEN):
        store.watch(repo)
    outcomes = cycle()
    assert sorted(str(o.repo) for o in outcomes) == sorted([str(LLAMA), str(QWEN)])
    assert all(isinstance(o, NewRevisions) for o in outcomes)
    states = {s.repo: s for s in store.repos.watched()}
    for repo in (LLAMA, QWEN):
        assert states[repo].next_poll_at is not None
        assert states[repo].next_poll_at.replace(tzinfo=timezone.utc) > clock() + timedelta(seconds=50)
    assert cycle() == []  # nothing is due yet

    # An interval later nothing moved upstream: one listing request, no repo is due or claimed.
    clock.offset = timedelta(seconds=61)
    hub_requests.clear()
    assert cycle() == []
    assert hub_requests == ["GET /api/models"]

    # A commit lands on one repo: the listing makes it due and only it is fetched; the other is
    # neither polled nor rescheduled.
    new_sha = sim.advance(str(LLAMA))
    clock.offset = timedelta(seconds=122)
    hub_requests.clear()
    assert cycle() == [NewRevisions(LLAMA, (new_sha,))]
    assert hub_requests[0] == "GET /api/models" and any("Llama" in r for r in hub_requests)
    assert not any("Qwen" in r for r in hub_requests)
    assert store.repo_state(QWEN).next_poll_at == states[QWEN].next_poll_at

    # Past the re-check interval each repo gets its own head request though nothing moved.
    clock.offset = timedelta(seconds=122 + 6 * 3600 + 60)
    hub_requests.clear()
    outcomes = cycle()
    assert sorted(outcomes, key=lambda o: str(o.repo)) == sorted(
        [Unchanged(LLAMA, new_sha), Unchanged(QWEN, sim.head(str(QWEN)))], key=lambda o: str(o.repo)
    )
    assert any("Qwen" in r for r in hub_requests) and any("Llama" in r for r in hub_requests)


def test_a_moved_repo_that_is_not_watched_is_left_alone(
    hubsim_factory: Any, store: Any, hub_requests: list[str]
) -> None:
    sim = hubsim_factory(at="v1")
    clock = Clock()
    cycle = cycle_for(sim, store, clock)
    store.watch(QWEN)
    store.watch(LLAMA)
    cycle()
    store.unwatch(LLAMA)
    sim.advance(str(LLAMA))
    clock.offset = timedelta(seconds=61)
    hub_requests.clear()
    assert cycle() == []
    assert hub_requests == ["GET /api/models"]


def test_an_idle_cycle_lists_models_and_datasets_once_each_and_a_moved_dataset_alone_is_fetched(
    hubsim_factory: Any, datasets_root: Any, store: Any, hub_requests: list[str]
) -> None:
    sim = hubsim_factory(root=datasets_root, at="v1")
    clock = Clock()
    cycle = cycle_for(sim, store, clock)
    model, dataset = RepoId.parse("hubsim-test/tiny-llama"), RepoId.parse("datasets/hubwatch-test/reviews")
    for repo in (model, dataset):
        store.watch(repo)
    assert sorted(str(o.repo) for o in cycle()) == sorted([str(model), str(dataset)])

    # Nothing moved: one listing of each type, no request about any repo.
    clock.offset = timedelta(seconds=61)
    hub_requests.clear()
    assert cycle() == []
    assert sorted(hub_requests) == ["GET /api/datasets", "GET /api/models"]

    # The dataset moves: its listing makes it due, and only it is asked about.
    new_sha = sim.advance(str(dataset))
    clock.offset = timedelta(seconds=122)
    hub_requests.clear()
    assert cycle() == [NewRevisions(dataset, (new_sha,))]
    assert sorted(hub_requests[:2]) == ["GET /api/datasets", "GET /api/models"]
    asked = hub_requests[2:]
    assert asked and all("/datasets/hubwatch-test/reviews" in r for r in asked), asked
    assert not any("tiny-llama" in r for r in hub_requests)

    # With the dataset unwatched, a cycle reads the models' listing alone.
    store.unwatch(dataset)
    clock.offset = timedelta(seconds=183)
    hub_requests.clear()
    assert cycle() == []
    assert hub_requests == ["GET /api/models"]


def test_two_workers_share_the_repos_without_duplicates(hubsim_factory: Any, database_url: str) -> None:
    from hubwatch.storage import Store

    sim = hubsim_factory(at=None)
    stores = [Store.open(database_url), Store.open(database_url)]
    try:
        repos = [LLAMA, QWEN, CHATGLM, FALCON]
        for repo in repos:
            stores[0].watch(repo)
        clock = Clock()
        cycles = [cycle_for(sim, stores[i], clock, worker=f"w{i}") for i in range(2)]
        for c in cycles:
            c._batch = 1  # claim one repo at a time so both workers get some
        results: list[list[Any]] = [[], []]

        def work(i: int) -> None:
            results[i] = cycles[i]()

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        polled = [o.repo for r in results for o in r]
        assert sorted(map(str, polled)) == sorted(map(str, repos))  # each repo exactly once
        for repo in repos:
            shas = [e.revision.sha for e in stores[0].history(repo)]
            assert len(shas) == len(set(shas)) and shas
    finally:
        for s in stores:
            s.close()


def test_scheduler_runs_the_job_and_stops() -> None:
    ran = threading.Event()
    once = threading.Event()
    scheduler = Scheduler(ran.set, interval_s=3600)
    scheduler.start()
    try:
        assert ran.wait(10), "the first cycle runs at start"
        scheduler.submit(once.set)
        assert once.wait(10)
    finally:
        scheduler.stop()
    assert not scheduler.running


def test_scheduler_survives_a_failing_cycle() -> None:
    calls: list[int] = []
    done = threading.Event()

    def job() -> None:
        calls.append(1)
        done.set()
        raise RuntimeError("boom")

    scheduler = Scheduler(job, interval_s=3600)
    scheduler.start()
    try:
        assert done.wait(10)
        again = threading.Event()
        scheduler.submit(again.set)
        assert again.wait(10)
    finally:
        scheduler.stop()


def test_the_cycle_line_tells_rate_limit_deferrals_from_failures(caplog: pytest.LogCaptureFixture) -> None:
    """A repo the rate limit put off is not a failure in the cycle's log line either."""
    from hubwatch.domain.records import PollState
    from hubwatch.tracker.poller import Failed
    from hubwatch.tracker.scheduler import _log_cycle

    a, b, c = RepoId("o", "a"), RepoId("o", "b"), RepoId("o", "c")
    outcomes = [NewRevisions(a, ("1" * 40, "2" * 40)),
                Failed(b, "o/b: 429", PollState.ERROR, "wait", deferred=True),
                Failed(c, "o/c: broken", PollState.ERROR, "look")]
    with caplog.at_level(logging.INFO, logger="hubwatch.tracker.scheduler"):
        _log_cycle(outcomes)
    assert "3 repos polled, 2 new revisions, 1 failed, 1 deferred by the rate limit" in caplog.text
