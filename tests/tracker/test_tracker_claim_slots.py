"""Claiming as poll slots free (issue 32): a worker polls at most `min(poll_concurrency,
claim_batch)` repos at once and claims the next due repo as soon as one of them is done, so one
slow repo does not hold back the claiming and polling of the others, and a repo polled in this
cycle and due again does not take a slot from one not polled yet. Against the in-memory hub."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest

from hubwatch.domain.records import RepoId
from hubwatch.settings import Settings
from hubwatch.tracker.poller import NewRevisions
from hubwatch.tracker.scheduler import PollCycle

from tests.tracker.fake_hub import T0, FakeHub

CONFIG = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 512}  # fmt: skip
SLOW = RepoId.parse("acme/slow")
FAST = [RepoId.parse(f"acme/fast-{i}") for i in range(6)]
WAIT_S = 10.0  # how long the slow repo's head request waits for the others at most


class SlowHub(FakeHub):
    """The slow repo's head request is answered only once every other repo has asked for its own
    head (or after WAIT_S); each head request notes how many repos were leased at that moment."""

    def __init__(self, store: Any) -> None:
        super().__init__()
        self.store = store
        self.others_asked = threading.Event()
        self.waited_out = False
        self.leased_at_heads: list[int] = []
        self._asked_heads: set[RepoId] = set()
        self._lock = threading.Lock()

    def head_and_id(self, repo: RepoId, revision: str | None = None) -> tuple[str, RepoId]:
        leased = sum(1 for s in self.store.repos.watched() if s.lease_owner is not None)
        with self._lock:
            self.leased_at_heads.append(leased)
            self._asked_heads.add(repo)
            if set(FAST) <= self._asked_heads:
                self.others_asked.set()
        if repo == SLOW:
            self.waited_out = not self.others_asked.wait(WAIT_S)
        return super().head_and_id(repo, revision)


@pytest.mark.parametrize(("concurrency", "batch"), [(2, 2), (4, 2), (2, 4)])
def test_a_slow_repo_does_not_hold_back_claiming_the_others(store: Any, concurrency: int, batch: int) -> None:
    hub = SlowHub(store)
    for repo in [SLOW, *FAST]:  # watched in this order: the slow repo is claimed first
        hub.push(repo, CONFIG, at=T0)
        store.watch(repo)
    settings = Settings(database_url="sqlite://", hub_endpoint=FakeHub.endpoint, poll_concurrency=concurrency,
                        claim_batch=batch)  # fmt: skip
    now = T0 + timedelta(minutes=5)
    cycle = PollCycle(hub=hub, store=store, settings=settings, worker_id="w", clock=lambda: now)
    try:
        outcomes = cycle()
    finally:
        cycle.close()
    # Every other repo was claimed, polled and asked for its head while the slow one was still
    # waiting for its answer: with a claimed batch polled to its slowest repo, the slow repo's batch
    # partner would have been the only other one and the slow repo would have waited WAIT_S.
    assert not hub.waited_out
    assert [o.repo for o in outcomes] == [SLOW, *FAST]  # in claim order
    assert all(isinstance(o, NewRevisions) for o in outcomes)
    assert {r: store.head(r) is not None for r in [SLOW, *FAST]} == dict.fromkeys([SLOW, *FAST], True)
    # Never more repos leased at once than it polls at once, and the slot the slow repo holds is one of them.
    assert max(hub.leased_at_heads) == min(concurrency, batch)
    assert all(s.lease_owner is None for s in store.repos.watched())  # no lease left behind


def test_a_repo_polled_and_due_again_cannot_fill_a_claim(store: Any) -> None:
    # One slot: X was polled this cycle and is due again, before Y in claim order (it came due
    # first). Its first meeting unleases it; from then on the claim asks for one more, and gets Y.
    hub = FakeHub()
    x, y = RepoId.parse("acme/x"), RepoId.parse("acme/y")
    now = T0 + timedelta(minutes=5)
    for repo, due in ((x, now - timedelta(minutes=2)), (y, now - timedelta(minutes=1))):
        hub.push(repo, CONFIG, at=T0)
        store.watch(repo)
        store.repos.mark_due([repo], due)
    settings = Settings(database_url="sqlite://", hub_endpoint=FakeHub.endpoint, claim_batch=1)
    cycle = PollCycle(hub=hub, store=store, settings=settings, worker_id="w", clock=lambda: now)
    try:
        assert cycle._claim(1, {x}, set()) == ([], [x])  # met X again: nothing fresh, X left unleased
        assert cycle._claim(1, {x}, {x}) == ([y], [])  # X cannot take the one slot from Y
    finally:
        cycle.close()
    assert {s.repo: s.lease_owner for s in store.repos.watched()} == {x: None, y: "w"}
