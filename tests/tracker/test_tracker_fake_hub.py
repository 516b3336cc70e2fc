"""The poller, the scheduler and the derivative refresh against the in-memory hub (fake_hub.FakeHub):
the tracker's logic with no HTTP. The same paths over real HTTP are in the emulator tests."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from hubwatch.domain.records import RepoId
from hubwatch.settings import Settings
from hubwatch.tracker.derivatives import refresh_derivatives, watch_with_derivatives
from hubwatch.tracker.poller import Failed, NewRevisions, Unchanged, poll_repo
from hubwatch.tracker.scheduler import PollCycle

from tests.tracker.fake_hub import T0, FakeHub

REPO = RepoId.parse("acme/tiny")
CONFIG = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 512}  # fmt: skip
SETTINGS = Settings(database_url="sqlite://", hub_endpoint=FakeHub.endpoint)


def test_the_poller_stores_new_commits_in_order_then_asks_one_head(store: Any) -> None:
    hub = FakeHub()
    first = hub.push(REPO, CONFIG, "initial")
    second = hub.push(REPO, {**CONFIG, "max_position_embeddings": 1024}, "longer context")
    store.watch(REPO)
    outcome = poll_repo(REPO, hub=hub, store=store, settings=SETTINGS)
    assert isinstance(outcome, NewRevisions) and outcome.shas == (first, second)
    assert store.head(REPO).sha == second
    asked = dict(hub.requests)
    assert isinstance(poll_repo(REPO, hub=hub, store=store, settings=SETTINGS), Unchanged)
    assert hub.requests["head_and_id"] == asked["head_and_id"] + 1
    assert hub.requests["commits"] == asked["commits"] and hub.requests["snapshot"] == asked["snapshot"]
    third = hub.push(REPO, {**CONFIG, "vocab_size": 2000}, "bigger vocab")
    outcome = poll_repo(REPO, hub=hub, store=store, settings=SETTINGS)
    assert isinstance(outcome, NewRevisions) and outcome.shas == (third,)


def test_a_repo_the_hub_does_not_know_is_a_recorded_failure(store: Any) -> None:
    store.watch(REPO)
    outcome = poll_repo(REPO, hub=FakeHub(), store=store, settings=SETTINGS)
    assert isinstance(outcome, Failed) and str(REPO) in outcome.reason and outcome.fix


def test_a_cycle_polls_the_watched_repos_the_listing_names(store: Any) -> None:
    hub = FakeHub()
    sha = hub.push(REPO, CONFIG, at=T0)
    store.watch(REPO)
    now = [T0 + timedelta(minutes=5)]
    cycle = PollCycle(hub=hub, store=store, settings=SETTINGS, clock=lambda: now[0])
    outcomes = cycle()
    assert [type(o) for o in outcomes] == [NewRevisions] and store.head(REPO).sha == sha
    assert hub.requests["recently_modified"] == 1  # one listing for the cycle


def test_a_derivative_listed_later_is_watched_at_the_next_refresh(store: Any) -> None:
    hub = FakeHub()
    base, tune = RepoId.parse("acme/base"), RepoId.parse("acme/base-tune")
    hub.push(base, CONFIG)
    settings = Settings(database_url="sqlite://", hub_endpoint=FakeHub.endpoint, derivatives_refresh_s=3600)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    now = [start]
    assert watch_with_derivatives(store, hub, base, clock=lambda: now[0]) == []
    hub.children[base] = [(tune, "finetune")]
    now[0] = start + timedelta(minutes=30)
    assert refresh_derivatives(store, hub, settings, lambda: now[0]) == {}  # not due yet: no listing read
    assert hub.requests["derivatives"] == 1
    now[0] = start + timedelta(hours=2)
    assert refresh_derivatives(store, hub, settings, lambda: now[0]) == {base: [tune]}
    assert tune in {s.repo for s in store.repos.watched()}
