"""A busy datasets listing, end to end (the emulator's `busy_datasets_listing`, the official client):
only the watched datasets are polled one by one for that cycle, the models' listing still vouches
for the models, and the next cycle is back to one listing request per repo type."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hub_requests import sent  # noqa: F401  (the fixture)

from hubwatch.domain.records import RepoId
from hubwatch.settings import Settings
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import NewRevisions
from hubwatch.tracker.scheduler import PollCycle

MODEL = RepoId.parse("hubsim-test/tiny-llama")
REVIEWS = RepoId.parse("datasets/hubwatch-test/reviews")
IMDB = RepoId.parse("datasets/stanfordnlp/imdb")


class Clock:
    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(timezone.utc) + self.offset


def test_a_busy_datasets_listing_makes_only_the_datasets_due(
    hubsim_factory: Any, datasets_root: Path, store: Any, sent: list[str]
) -> None:
    sim = hubsim_factory(root=datasets_root, at="v1")
    clock = Clock()
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, poll_interval_s=60, hf_token="")
    cycle = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="w1",
                      clock=clock)
    for repo in (MODEL, REVIEWS, IMDB):
        store.watch(repo)
    cycle()  # the backfill
    clock.offset += timedelta(seconds=61)
    sent.clear()
    assert cycle() == [] and sorted(sent) == ["GET /api/datasets", "GET /api/models"]  # idle: one listing a type

    sim.advance(str(REVIEWS))
    clock.offset += timedelta(seconds=61)
    sim.state.busy_datasets_listing = (10_050, clock())  # 10,050 other datasets changed since the last cycle
    sent.clear()
    outcomes = cycle()
    assert sum(r == "GET /api/datasets" for r in sent) == 11  # 10,000 entries and one more: it gives up
    assert sum(r == "GET /api/models" for r in sent) == 1  # the models' listing still vouches for the model
    assert {str(o.repo) for o in outcomes} == {str(REVIEWS), str(IMDB)}  # every watched dataset, no model
    assert not any(f"/api/models/{MODEL.hub_id}" in r for r in sent)
    assert any(isinstance(o, NewRevisions) and o.repo == REVIEWS for o in outcomes)
    totals = store.telemetry.cycle_totals()
    assert totals.latest is not None and (totals.latest.listing, totals.latest.datasets_listing) == ("ok", "busy")

    # Next cycle: the datasets' window reaches back to the busy cycle only, and that listing vouches again.
    sim.state.busy_datasets_listing = None
    clock.offset += timedelta(seconds=61)
    sent.clear()
    assert cycle() == []
    assert sorted(sent) == ["GET /api/datasets", "GET /api/models"]
    cycle.close()
