"""A webhook's immediate poll: only watched repos, found by one lookup (not the whole watch list)."""

from __future__ import annotations

from typing import Any

from hubwatch.settings import Settings
from hubwatch.domain.records import RepoId
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import NewRevisions
from hubwatch.tracker.scheduler import PollCycle

QWEN = RepoId.parse("Qwen/Qwen-7B")


def test_poll_now_polls_watched_repos_only(hubsim: Any, store: Any, count_selects: Any) -> None:
    settings = Settings(database_url="sqlite://", hub_endpoint=hubsim.url)
    cycle = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="w")
    assert cycle.poll_now(QWEN) is None  # never watched
    for i in range(20):
        store.watch(RepoId("bulk", f"m{i}"))
    store.watch(QWEN)
    with count_selects(store) as seen:
        assert cycle.poll_now(RepoId("bulk", "not-watched")) is None
    # one repo looked up by its key (SQLite quotes the column name, PostgreSQL does not), never the whole list
    assert seen and all('repos."key" =' in s or "repos.key =" in s for s in seen)
    assert isinstance(cycle.poll_now(QWEN), NewRevisions)
    store.unwatch(QWEN)
    assert cycle.poll_now(QWEN) is None  # unwatched: its history is kept, but it is not polled
