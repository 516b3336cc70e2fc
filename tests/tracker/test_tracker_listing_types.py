"""The recently-modified listing per repo type, against the in-memory hub (fake_hub.FakeHub): a
cycle reads one listing for each type that is watched (models, datasets), and each listing's
busy, failed and since window hold for its own type only. Through the emulator and the real
client: tests/tracker/test_tracker_scheduler.py."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from hubwatch.domain.records import RepoId, RepoType
from hubwatch.settings import Settings
from hubwatch.tracker.poller import NewRevisions
from hubwatch.tracker.scheduler import PollCycle

from tests.tracker.fake_hub import T0, FakeHub

MODEL = RepoId.parse("acme/tiny")
TWIN = RepoId.parse("datasets/acme/tiny")  # a dataset of the model's org/name: another repo
DATA = RepoId.parse("datasets/acme/reviews")
CONFIG = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 512}  # fmt: skip
# The fake hub converts no dataset: a young dataset head would wait for its parquet conversion and be
# asked again (tests/tracker/test_tracker_parquet_late.py); here no wait, so only the listings speak.
SETTINGS = Settings(database_url="sqlite://", hub_endpoint=FakeHub.endpoint, poll_interval_s=60, conversion_wait_s=0)
PER_REPO = ("head_and_id", "commits", "snapshot")


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def _started(store: Any, *repos: RepoId) -> tuple[FakeHub, PollCycle, Clock]:
    """A hub holding `repos` (one commit each at T0), all watched and backfilled by a first cycle."""
    hub = FakeHub()
    for repo in repos:
        hub.push(repo, CONFIG, "initial", at=T0)
        store.watch(repo)
    clock = Clock()
    clock.now = T0 + timedelta(minutes=1)
    cycle = PollCycle(hub=hub, store=store, settings=SETTINGS, worker_id="w1", clock=clock)
    assert sorted(str(o.repo) for o in cycle()) == sorted(str(r) for r in repos)
    return hub, cycle, clock


def _listings(hub: FakeHub) -> tuple[int, int]:
    return hub.requests.get("recently_modified", 0), hub.requests.get("recently_modified:dataset", 0)


def _per_repo(hub: FakeHub) -> int:
    return sum(hub.requests.get(name, 0) for name in PER_REPO)


def test_an_idle_cycle_reads_one_listing_per_watched_type_and_nothing_else(store: Any) -> None:
    hub, cycle, clock = _started(store, MODEL, DATA)
    before, listings = _per_repo(hub), _listings(hub)
    assert listings == (1, 1)  # the backfill's cycle listed each type once too
    clock.now += timedelta(minutes=5)
    assert cycle() == []
    assert _listings(hub) == (2, 2) and _per_repo(hub) == before  # one of each, no repo asked
    latest = store.telemetry.cycle_totals().latest
    assert (latest.listing, latest.datasets_listing) == ("ok", "ok")


def test_only_models_watched_reads_no_dataset_listing_and_only_datasets_no_model_listing(store: Any) -> None:
    hub, cycle, clock = _started(store, MODEL)
    clock.now += timedelta(minutes=5)
    assert cycle() == []
    assert _listings(hub) == (2, 0)
    latest = store.telemetry.cycle_totals().latest
    assert (latest.listing, latest.datasets_listing) == ("ok", "none")

    store.unwatch(MODEL)
    store.watch(DATA)
    hub.push(DATA, CONFIG, "initial", at=clock.now)
    clock.now += timedelta(minutes=5)
    assert [o.repo for o in cycle()] == [DATA]  # newly watched: due at once
    clock.now += timedelta(minutes=5)
    assert cycle() == []
    assert _listings(hub) == (2, 2)  # the models' listing is no longer read
    latest = store.telemetry.cycle_totals().latest
    assert (latest.listing, latest.datasets_listing) == ("none", "ok")


def test_a_moved_dataset_is_polled_and_the_model_of_its_name_is_not(store: Any) -> None:
    hub, cycle, clock = _started(store, MODEL, TWIN)
    heads = {MODEL: store.head(MODEL).sha, TWIN: store.head(TWIN).sha}
    new = hub.push(TWIN, {**CONFIG, "vocab_size": 2000}, "more rows", at=clock.now + timedelta(minutes=2))
    clock.now += timedelta(minutes=5)
    asked = dict(hub.requests)
    assert cycle() == [NewRevisions(TWIN, (new,))]
    assert hub.requests["head_and_id"] == asked["head_and_id"] + 1  # the dataset's head, not the model's
    assert store.head(TWIN).sha == new and store.head(MODEL).sha == heads[MODEL]

    # And the other way: the model moves, its dataset twin stays where it is.
    newer = hub.push(MODEL, {**CONFIG, "vocab_size": 4000}, "bigger vocab", at=clock.now + timedelta(minutes=2))
    clock.now += timedelta(minutes=5)
    assert cycle() == [NewRevisions(MODEL, (newer,))]
    assert store.head(TWIN).sha == new


def test_a_busy_dataset_listing_makes_every_watched_dataset_due_and_no_model(store: Any) -> None:
    other = RepoId.parse("datasets/acme/other")
    hub, cycle, clock = _started(store, MODEL, DATA, other)
    hub.busy.add(RepoType.DATASET)
    clock.now += timedelta(minutes=5)
    outcomes = cycle()
    assert sorted(str(o.repo) for o in outcomes) == sorted([str(DATA), str(other)])  # their own head request
    latest = store.telemetry.cycle_totals().latest
    assert (latest.listing, latest.datasets_listing) == ("ok", "busy")
    hub.busy.clear()
    clock.now += timedelta(minutes=5)
    assert cycle() == []  # one cycle of degradation, and for the datasets only

    hub.busy.add(RepoType.MODEL)  # and the other way round
    clock.now += timedelta(minutes=5)
    assert [o.repo for o in cycle()] == [MODEL]
    latest = store.telemetry.cycle_totals().latest
    assert (latest.listing, latest.datasets_listing) == ("busy", "ok")


def test_a_failed_dataset_listing_leaves_models_alone_and_its_window_to_the_next_listing(store: Any) -> None:
    hub, cycle, clock = _started(store, MODEL, DATA)  # listed at T0+1m
    hub.failing.add(RepoType.DATASET)
    moved_data = hub.push(DATA, {**CONFIG, "vocab_size": 2000}, "more rows", at=T0 + timedelta(minutes=20))
    moved_model = hub.push(MODEL, {**CONFIG, "vocab_size": 3000}, "bigger vocab", at=T0 + timedelta(minutes=20))
    clock.now = T0 + timedelta(minutes=30)
    # The models' listing works: the moved model is polled; the dataset waits, unseen.
    assert cycle() == [NewRevisions(MODEL, (moved_model,))]
    latest = store.telemetry.cycle_totals().latest
    assert (latest.listing, latest.datasets_listing) == ("ok", "failed")
    # A model polled while its own listing works waits for the safety re-check, as before.
    model_due = store.repo_state(MODEL).next_poll_at
    assert model_due is not None and model_due.replace(tzinfo=clock.now.tzinfo) > clock.now + timedelta(hours=4)

    # The datasets' listing is back half an hour later: it reaches back to its own last good listing
    # (T0+1m less the margin), not to the failed cycle's time, so the commit at T0+20m is seen.
    hub.failing.clear()
    clock.now = T0 + timedelta(minutes=60)
    assert cycle() == [NewRevisions(DATA, (moved_data,))]


def test_a_dataset_polled_while_its_listing_fails_is_due_again_at_the_poll_interval(store: Any) -> None:
    hub, cycle, clock = _started(store, MODEL, DATA)
    hub.failing.add(RepoType.MODEL)
    store.repos.mark_due([MODEL, DATA], clock.now)  # both due (say a webhook's or a re-check's turn)
    clock.now += timedelta(minutes=5)
    assert sorted(str(o.repo) for o in cycle()) == sorted([str(MODEL), str(DATA)])
    data_due, model_due = store.repo_state(DATA).next_poll_at, store.repo_state(MODEL).next_poll_at
    assert data_due is not None and model_due is not None
    tz = clock.now.tzinfo
    # Without its listing a model is polled every poll interval; the dataset's listing works: re-check.
    assert model_due.replace(tzinfo=tz) <= clock.now + timedelta(seconds=SETTINGS.poll_interval_s)
    assert data_due.replace(tzinfo=tz) > clock.now + timedelta(hours=4)
