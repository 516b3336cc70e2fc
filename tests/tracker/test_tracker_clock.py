"""One clock reaches every poll time: `poll_repos` and `PollCycle` record the injected "now"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hubwatch.domain.clock import fixed_clock, system_clock
from hubwatch.domain.records import RepoId
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import Failed, NewRevisions, poll_repos
from hubwatch.tracker.scheduler import PollCycle

QWEN = RepoId.parse("Qwen/Qwen-7B")
MISSING = RepoId.parse("nobody/not-there")
AT = datetime(2021, 3, 4, 5, 6, 7, tzinfo=UTC)


def test_poll_repos_records_the_injected_clock(hubsim: Any, tmp_path: Path) -> None:
    clock = fixed_clock(AT)
    settings = Settings(database_url="sqlite://", hub_endpoint=hubsim.url)
    with Store.open(f"sqlite:///{tmp_path / 'hw.db'}", clock) as store:
        store.watch(QWEN)
        store.watch(MISSING)
        ok, missing = poll_repos([QWEN, MISSING], hub=HubClient.from_settings(settings), store=store,
                                 settings=settings, clock=clock)
        assert isinstance(ok, NewRevisions) and isinstance(missing, Failed)
        states = {s.repo: s for s in store.repos.watched()}
    assert states[QWEN].last_polled_at == AT  # a poll that stored revisions
    assert states[MISSING].last_polled_at == AT  # and one that failed


def test_poll_cycle_passes_its_clock_to_the_poll(hubsim: Any, tmp_path: Path) -> None:
    settings = Settings(database_url="sqlite://", hub_endpoint=hubsim.url)
    with Store.open(f"sqlite:///{tmp_path / 'hw.db'}") as store:
        store.watch(QWEN)
        cycle = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="w",
                          clock=fixed_clock(AT))
        assert isinstance(cycle.poll_now(QWEN), NewRevisions)  # the webhook path
        state = store.repo_state(QWEN)
    assert state is not None and state.last_polled_at == AT


def test_clocks_read_tz_aware_utc() -> None:
    now = system_clock()
    assert now.tzinfo is not None and now.utcoffset() == UTC.utcoffset(now)
    paris = datetime(2021, 3, 4, 6, 6, 7, tzinfo=timezone(timedelta(hours=1)))
    assert fixed_clock(paris)() == AT and fixed_clock(paris)().tzinfo == UTC
    try:
        fixed_clock(datetime(2021, 3, 4))
    except ValueError as exc:
        assert "no time zone" in str(exc)
    else:
        raise AssertionError("a naive time was accepted")
