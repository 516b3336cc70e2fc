"""Liveness against the real hub's behaviour (issue 10): deadlines, deferral, breaker, bad tokens, states.

Every test drives the emulator over HTTP with the official client; nothing is patched.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from hubwatch.domain.records import PollState, RepoId
from hubwatch.hubsim import demo_root
from hubwatch.hubsim.modes import requests_seen
from hubwatch.settings import Settings
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.hubstate import token_problem
from hubwatch.tracker.poller import Failed, NewRevisions, poll_repos
from hubwatch.tracker.scheduler import PollCycle

LLAMA = RepoId.parse("meta-llama/Llama-2-7b-hf")
QWEN = RepoId.parse("Qwen/Qwen-7B")
GEMMA = RepoId.parse("google/gemma-2b-it")
TINY = RepoId.parse("hubsim-test/tiny-llama")


@pytest.fixture
def root(tmp_path: Path, data_dir: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    for source in (
        demo_root() / "meta-llama__Llama-2-7b-hf",
        data_dir / "histories" / "Qwen__Qwen-7B",
        data_dir / "histories" / "google__gemma-2b-it",
        data_dir / "hubsim" / "hubsim-test__tiny-llama",
    ):
        (folder / source.name).symlink_to(source.resolve(), target_is_directory=True)
    return folder


def setup(hubsim_factory: Any, root: Path, store: Any, *repos: RepoId, **settings: Any) -> tuple[Any, Settings]:
    sim = hubsim_factory(root=root, at="v1")
    for repo in repos:
        store.watch(repo)
    return sim, Settings(database_url="sqlite://", hub_endpoint=sim.url, poll_interval_s=60, **settings)


def test_a_trickling_body_is_cut_off_at_the_hub_timeout(hubsim_factory: Any, root: Path, store: Any) -> None:
    sim, settings = setup(hubsim_factory, root, store, LLAMA, hub_timeout_s=2)
    sim.set_faults(trickle="/api/models/*/commits/*", trickle_ms=300)  # ~1 KB listing: minutes of trickle
    began = time.monotonic()
    (outcome,) = poll_repos([LLAMA], hub=HubClient.from_settings(settings), store=store, settings=settings)
    took = time.monotonic() - began
    assert isinstance(outcome, Failed) and "in time" in outcome.reason
    assert took < 8, f"a trickling body held the poll {took:.1f} s with a 2 s hub timeout"
    sim.set_faults()  # ends the trickle the server is still sending


def test_the_poll_deadline_bounds_all_requests_of_one_poll(hubsim_factory: Any, root: Path, store: Any) -> None:
    # Each request is fine alone; a whole backfill is not: head, commits and the tree listing come
    # one after another (the files of a snapshot together), 3 × 0.6 s past the 1.5 s deadline.
    sim, settings = setup(hubsim_factory, root, store, LLAMA, hub_timeout_s=30, poll_deadline_s=1.5)
    sim.set_faults(latency_ms=600)
    began = time.monotonic()
    (outcome,) = poll_repos([LLAMA], hub=HubClient.from_settings(settings), store=store, settings=settings)
    assert time.monotonic() - began < 6
    assert isinstance(outcome, Failed) and ("deadline" in outcome.reason or "in time" in outcome.reason)


def test_retry_after_on_the_commit_listing_defers_the_repo_without_sleeping(
    hubsim_factory: Any, root: Path, store: Any
) -> None:
    sim, settings = setup(hubsim_factory, root, store, LLAMA)
    sim.set_faults(rate_limit=1, retry_after=30, rate_limit_path="/api/models/*/commits/*")
    cycle = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings)
    began = datetime.now(timezone.utc)
    start = time.monotonic()
    outcomes = cycle()
    assert time.monotonic() - start < 10  # huggingface_hub alone sleeps 31 s and retries
    (limited,) = [o for o in outcomes if o.repo == LLAMA]
    assert isinstance(limited, Failed) and limited.retry_after == 30
    state = store.repo_state(LLAMA)
    assert state.next_poll_at is not None and state.next_poll_at >= began + timedelta(seconds=29)


def test_an_empty_ratelimit_window_defers_before_any_429(hubsim_factory: Any, root: Path, store: Any) -> None:
    sim, settings = setup(hubsim_factory, root, store, LLAMA, QWEN)
    sim.set_faults(ratelimit_quota=2, ratelimit_window_s=120)
    hub = HubClient.from_settings(settings)
    llama, qwen = poll_repos([LLAMA, QWEN], hub=hub, store=store, settings=settings)
    # Two requests used the window (the second answer said r=0); nothing more was sent.
    assert requests_seen(sim.state) == 2
    assert isinstance(llama, Failed) and "deferred" in llama.reason and (llama.retry_after or 0) > 100
    assert isinstance(qwen, Failed) and (qwen.retry_after or 0) > 100


def test_the_breaker_opens_while_the_hub_is_down_then_probes(hubsim_factory: Any, root: Path, store: Any) -> None:
    sim, settings = setup(hubsim_factory, root, store, LLAMA, QWEN, GEMMA,
                          hub_retries=0, breaker_failures=2, breaker_cooldown_s=1)  # fmt: skip
    hub = HubClient.from_settings(settings)
    sim.set_faults(error_rate=1.0, error_status=503)
    outcomes = poll_repos([LLAMA, QWEN, GEMMA], hub=hub, store=store, settings=settings)
    assert all(isinstance(o, Failed) for o in outcomes)
    assert requests_seen(sim.state) == 2  # the third repo was not sent: the breaker is open
    third = outcomes[2]
    assert isinstance(third, Failed) and "not called" in third.reason
    sim.set_faults()
    time.sleep(1.2)
    (probe,) = poll_repos([LLAMA], hub=hub, store=store, settings=settings)
    assert isinstance(probe, NewRevisions)  # the probe went through and closed the breaker


def test_a_rejected_token_stops_the_daemon_and_shows_on_healthz(hubsim_factory: Any, root: Path, store: Any) -> None:
    from fastapi.testclient import TestClient

    from hubwatch.feeds.app import create_app

    sim, settings = setup(hubsim_factory, root, store, LLAMA, QWEN, hf_token="hf_revoked")
    sim.set_faults(invalid_token="hf_revoked")
    cycle = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings)
    assert all(o.token_rejected for o in cycle() if isinstance(o, Failed))
    sent = requests_seen(sim.state)
    assert sent <= 2  # the listing (and at most one head request), then nothing
    problem = token_problem(store)
    assert problem is not None and "rejected the token" in problem.reason and "HF_TOKEN" in problem.fix
    assert cycle() == [] and requests_seen(sim.state) == sent
    # Another worker with the same token does not call either (the fingerprint is in the store).
    assert PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings)() == []
    assert requests_seen(sim.state) == sent
    assert store.repo_state(LLAMA).failures == 0  # not the repo's fault: no backoff counted
    app = create_app(settings=settings, store=store)
    body = TestClient(app).get("/healthz").json()
    assert body["hub"]["status"] == "token_rejected" and body["status"] == "degraded"
    # A new token polls again and clears the problem.
    fixed = settings.model_copy(update={"hf_token": "hf_good"})
    outcomes = PollCycle(hub=HubClient.from_settings(fixed), store=store, settings=fixed)()
    assert {o.repo for o in outcomes if isinstance(o, NewRevisions)} == {LLAMA, QWEN}
    assert token_problem(store) is None


@pytest.mark.parametrize("mode", ["disabled", "deleted", "gated"])
def test_disabled_deleted_and_gated_repos_back_off_longer_each_time(
    hubsim_factory: Any, root: Path, store: Any, mode: str
) -> None:
    sim, settings = setup(hubsim_factory, root, store, GEMMA)
    hub = HubClient.from_settings(settings)
    if mode != "gated":  # the hub answers model info of a gated repo; a new one is what fails there
        (first,) = poll_repos([GEMMA], hub=hub, store=store, settings=settings)
        assert isinstance(first, NewRevisions)  # it existed; now it goes away while we run
    sim.set_faults(**{mode: "google/*"})
    if mode == "deleted":  # a deleted repo leaves the listing too: only its own re-check finds it gone
        listed = hub.recently_modified(datetime(2000, 1, 1, tzinfo=timezone.utc))
        assert listed is not None and GEMMA not in listed and listed
    now = [datetime(2030, 1, 1, tzinfo=timezone.utc)]
    cycle = PollCycle(hub=hub, store=store, settings=settings, clock=lambda: now[0])
    store.repos.mark_due([GEMMA], now[0])
    delays = []
    for _ in range(3):
        (outcome,) = [o for o in cycle() if o.repo == GEMMA]
        state = store.repo_state(GEMMA)
        expected = {"disabled": PollState.DISABLED, "deleted": PollState.NOT_FOUND, "gated": PollState.GATED}[mode]
        assert isinstance(outcome, Failed) and state.state == expected
        delays.append((state.next_poll_at - now[0]).total_seconds())
        now[0] = state.next_poll_at + timedelta(seconds=1)
    assert delays == sorted(delays) and delays[0] < delays[1] < delays[2], delays


def test_gated_copies_let_in_the_token_with_access_only(hubsim_factory: Any, root: Path, store: Any) -> None:
    sim, settings = setup(hubsim_factory, root, store, LLAMA, GEMMA)
    sim.set_faults(gated="meta-llama/*", gated_token="hf_granted")
    other = settings.model_copy(update={"hf_token": "hf_someone_else"})
    (denied,) = poll_repos([LLAMA], hub=HubClient.from_settings(other), store=store, settings=other)
    assert isinstance(denied, Failed) and denied.state is PollState.GATED
    granted = settings.model_copy(update={"hf_token": "hf_granted"})
    (allowed,) = poll_repos([LLAMA], hub=HubClient.from_settings(granted), store=store, settings=granted)
    assert isinstance(allowed, NewRevisions)


@pytest.mark.parametrize("kind", ["not_json", "nested", "beyond_limit", "beyond_file"])
def test_a_broken_safetensors_header_is_a_finding_and_the_repo_moves_on(
    hubsim_factory: Any, root: Path, store: Any, kind: str
) -> None:
    sim, settings = setup(hubsim_factory, root, store, TINY)
    hub = HubClient.from_settings(settings)
    assert isinstance(poll_repos([TINY], hub=hub, store=store, settings=settings)[0], NewRevisions)
    sim.set_faults(broken_header="*.safetensors", broken_header_kind=kind)
    v2 = sim.advance(str(TINY))
    (broken,) = poll_repos([TINY], hub=hub, store=store, settings=settings)
    assert isinstance(broken, NewRevisions) and broken.shas == (v2,), broken
    changes = store.revision(TINY, v2).changes
    found = [c for c in changes if "safetensors header cannot be read" in c.summary]
    assert found and found[0].severity == "high", [c.summary for c in changes]
    sim.set_faults()
    v3 = sim.advance(str(TINY))
    (after,) = poll_repos([TINY], hub=hub, store=store, settings=settings)
    assert isinstance(after, NewRevisions) and after.shas == (v3,)
    assert store.repo_state(TINY).state == PollState.OK
