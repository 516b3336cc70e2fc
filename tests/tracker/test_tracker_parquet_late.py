"""A dataset head whose parquet conversion comes out after the poll that stored it (the hub converts
some minutes after main moves): later polls of the unchanged head ask its refs until the conversion
is out, add it to the stored revision and re-derive what it changes, so the history ends as if the
conversion had been out when the head was polled. Through the official huggingface_hub client and
the emulator's conversion lag (`HubSim(conversion_lag=True)`, `sim.convert`), on SQLite and
PostgreSQL; which requests each poll costs is seen from what the client really sent."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from hub_requests import sent  # noqa: F401  (the fixture)

from hubwatch.diff.dataset_parquet import CONVERSION_PATH
from hubwatch.feeds import create_app
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import NewRevisions, Unchanged, poll_repos
from hubwatch.tracker.scheduler import PollCycle

from tests.tracker.csv_upload import UPLOAD, csv_upload


class Clock:
    """A clock the test sets (the emulator's commit dates are in 2024)."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


def _settings(sim: Any, **extra: Any) -> Settings:
    return Settings(database_url="sqlite://", hub_endpoint=sim.url, hf_token="", **extra)


def _poll(sim: Any, store: Store, clock: Clock, **extra: Any) -> Any:
    settings = _settings(sim, **extra)
    (outcome,) = poll_repos([UPLOAD], hub=HubClient.from_settings(settings), store=store, settings=settings, clock=clock)
    return outcome


def _dates(sim: Any) -> list[datetime]:
    return [c.date for c in sim.state.history(str(UPLOAD)).commits]


def _conversion(store: Store, sha: str) -> bytes | None:
    return store.revisions.stored_file(UPLOAD, sha, CONVERSION_PATH)


def _asked(sent: list[str], what: str) -> list[str]:
    base = f"/api/datasets/{UPLOAD.hub_id}"
    return [s for s in sent if s.startswith(f"GET {base}/{what}")]


def _history(store: Store) -> list[tuple[str, list[tuple[str, str, str]]]]:
    return [(e.revision.sha, [(c.kind.value, c.severity.value, c.summary) for c in e.changes])
            for e in store.history(UPLOAD)]  # fmt: skip


def _advisories(store: Store) -> list[tuple[str, str, str, bool]]:
    return sorted((r.id, r.revision_sha, r.osv["summary"], r.withdrawn is not None) for r in store.advisories.records(UPLOAD))


def _lagging(hubsim_factory: Callable[..., Any], root: Path, store: Store) -> tuple[Any, datetime]:
    """The CSV upload (a card stating no sizes) at v1, watched, in an emulator with the conversion
    lag: the emulator and v1's commit date."""
    csv_upload(root)
    sim = hubsim_factory(root=root, at="v1", conversion_lag=True)
    store.watch(UPLOAD)
    return sim, _dates(sim)[0]


def _on_time(hubsim_factory: Callable[..., Any], root: Path, tmp_path: Path) -> Store:
    """The same two versions polled after each one's conversion was out: what the history must end as."""
    sim = hubsim_factory(root=root, at="v1")
    first, second = _dates(sim)
    reference = Store.open(f"sqlite:///{tmp_path / 'on-time.db'}")
    reference.watch(UPLOAD)
    assert isinstance(_poll(sim, reference, Clock(first + timedelta(minutes=20))), NewRevisions)
    sim.advance(str(UPLOAD))
    assert isinstance(_poll(sim, reference, Clock(second + timedelta(minutes=20))), NewRevisions)
    return reference


def test_a_late_conversion_is_added_to_the_head_and_its_changes_re_derived(
    hubsim_factory: Callable[..., Any], tmp_path: Path, store: Store, sent: list[str]
) -> None:
    root = tmp_path / "root"
    sim, first = _lagging(hubsim_factory, root, store)
    second = _dates(sim)[1]

    # v1, polled two minutes after its commit: the converter has not run, the head is kept without.
    clock = Clock(first + timedelta(minutes=2))
    outcome = _poll(sim, store, clock)
    assert isinstance(outcome, NewRevisions) and len(outcome.shas) == 1
    v1 = outcome.shas[0]
    assert _conversion(store, v1) is None
    assert outcome.conversion_due == clock.at + timedelta(seconds=300)  # conversion_recheck_s: asked again then

    # Asked again while the converter still has not run: its refs alone, and asked again later.
    clock.at = first + timedelta(minutes=8)
    sent.clear()
    outcome = _poll(sim, store, clock)
    assert isinstance(outcome, Unchanged) and outcome.conversion_due == clock.at + timedelta(seconds=300)
    assert len(_asked(sent, "refs")) == 1 and not _asked(sent, "tree") and not _asked(sent, "commits")

    # The converter runs: the next poll of the unchanged head adds v1's conversion to it, and the
    # first revision's description gains the columns the conversion's footers state.
    converted = sim.convert(str(UPLOAD))
    assert converted is not None
    before = store.summary(UPLOAD)
    clock.at = first + timedelta(minutes=14)
    outcome = _poll(sim, store, clock)
    assert isinstance(outcome, Unchanged) and outcome.conversion_due is None
    assert _conversion(store, v1) is not None
    after = store.summary(UPLOAD)
    assert before is not None and after is not None and after.version > before.version
    (initial,) = store.history(UPLOAD)
    (config,) = [c for c in initial.changes if c.kind.value == "subsets"]
    assert config.detail["columns"] == ["text", "label", "score"] and config.detail["file"] == "refs/convert/parquet"

    # Kept: the head is not asked again.
    clock.at = first + timedelta(minutes=30)
    sent.clear()
    assert isinstance(_poll(sim, store, clock), Unchanged)
    assert not _asked(sent, "refs")

    # v2 is pushed; polled a minute later, the branch still holds v1's conversion, the one v1 kept:
    # v2 is kept without one, and that conversion's date is not asked.
    sim.advance(str(UPLOAD))
    clock.at = second + timedelta(minutes=1)
    sent.clear()
    outcome = _poll(sim, store, clock)
    assert isinstance(outcome, NewRevisions) and outcome.conversion_due == clock.at + timedelta(seconds=300)
    v2 = outcome.shas[0]
    assert _conversion(store, v2) is None and not _asked(sent, f"commits/{converted}")
    assert not any(c.kind.value == "splits" for c in store.history(UPLOAD)[-1].changes)  # no rows known yet
    settings = _settings(sim)
    with TestClient(create_app(settings, store)) as client:
        waiting = client.get(UPLOAD.url_path).text
        assert "<td class=\"num\">250</td>" not in waiting and "No parquet conversion of this revision is kept" in waiting

        sim.convert(str(UPLOAD))
        clock.at = second + timedelta(minutes=9)
        outcome = _poll(sim, store, clock)
        assert isinstance(outcome, Unchanged) and outcome.conversion_due is None
        assert _conversion(store, v2) is not None
        latest = store.history(UPLOAD)[-1]
        train = next(c for c in latest.changes if c.detail.get("split") == "train")
        assert (train.kind.value, train.severity.value, train.summary) == ("splits", "medium", "default/train: 100 → 250 rows")
        page = client.get(UPLOAD.url_path)  # the page follows the raised history version
        assert page.status_code == 200 and "<td class=\"num\">250</td>" in page.text
        assert "No parquet conversion of this revision is kept" not in page.text

    # The history, and the advisories published from it, are those of the polls that came on time.
    reference = _on_time(hubsim_factory, root, tmp_path)
    try:
        assert _history(store) == _history(reference)
        assert _advisories(store) == _advisories(reference) and _advisories(store)
    finally:
        reference.close()


def test_a_head_past_the_wait_is_not_asked_again(
    hubsim_factory: Callable[..., Any], tmp_path: Path, store: Store, sent: list[str]
) -> None:
    sim, first = _lagging(hubsim_factory, tmp_path, store)
    clock = Clock(first + timedelta(minutes=20))
    outcome = _poll(sim, store, clock, conversion_wait_s=600)  # a conversion is waited for ten minutes
    assert isinstance(outcome, NewRevisions) and outcome.conversion_due is None
    sim.convert(str(UPLOAD))
    sent.clear()
    outcome = _poll(sim, store, clock, conversion_wait_s=600)
    assert isinstance(outcome, Unchanged) and outcome.conversion_due is None
    assert not _asked(sent, "refs") and _conversion(store, outcome.head) is None


def test_the_asks_thin_out_as_the_head_ages(
    hubsim_factory: Callable[..., Any], tmp_path: Path, store: Store, sent: list[str]
) -> None:
    """A dataset the hub never converts costs a bounded number of refs requests per head."""
    sim, first = _lagging(hubsim_factory, tmp_path, store)
    clock = Clock(first + timedelta(minutes=1))
    outcome = _poll(sim, store, clock)
    asks = 0
    sent.clear()
    while outcome.conversion_due is not None:
        wait = outcome.conversion_due - clock.at
        assert wait >= timedelta(seconds=300) and wait >= (clock.at - first) / 2 - timedelta(seconds=1)
        clock.at = outcome.conversion_due
        outcome = _poll(sim, store, clock)
        asks += 1
        assert isinstance(outcome, Unchanged)
    assert clock.at - first <= timedelta(days=1)  # asked within the day's wait (conversion_wait_s) only
    assert asks == len(_asked(sent, "refs")) and 10 <= asks <= 15, asks
    clock.at = first + timedelta(days=1, minutes=1)
    sent.clear()
    assert _poll(sim, store, clock).conversion_due is None and not _asked(sent, "refs")  # past it: never again


def test_the_cycle_comes_back_for_a_pending_conversion_then_idles(
    hubsim_factory: Callable[..., Any], tmp_path: Path, store: Store, sent: list[str]
) -> None:
    sim, first = _lagging(hubsim_factory, tmp_path, store)
    clock = Clock(first + timedelta(minutes=1))
    settings = _settings(sim, poll_interval_s=60)
    cycle = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="w1", clock=clock)
    try:
        (outcome,) = cycle()  # the backfill: v1 without its conversion
        assert isinstance(outcome, NewRevisions) and outcome.conversion_due is not None
        clock.at += timedelta(minutes=2)
        sent.clear()
        assert cycle() == []  # not due yet: the listing alone (the safety re-check is hours away)
        assert sent == ["GET /api/datasets"]
        sim.convert(str(UPLOAD))
        clock.at += timedelta(minutes=4)  # past conversion_due
        (outcome,) = cycle()
        assert isinstance(outcome, Unchanged) and outcome.conversion_due is None
        assert _conversion(store, outcome.head) is not None
        clock.at += timedelta(minutes=6)
        sent.clear()
        assert cycle() == [] and sent == ["GET /api/datasets"]  # kept: idle again, one listing request
    finally:
        cycle.close()
