"""check_pins against a real SQLite store (filled via Store.save_revision) and the real web app."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import ADVISED_SHAS
from fastapi.testclient import TestClient

from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.domain.records import RepoId, RevisionRecord, Severity
from hubwatch.pincheck.pincheck import PinReport, ServerSource, StoreSource, check_pins, fails
from hubwatch.pincheck.pins import scan_path, scan_text


@pytest.fixture
def store(advised_store_url: str) -> Iterator[Store]:
    opened = Store.open(advised_store_url)
    yield opened
    opened.close()


def by_where(reports: list[PinReport]) -> dict[str, PinReport]:
    return {r.pin.where: r for r in reports}


def test_statuses_over_the_fixture_code_base(store: Store, data_dir: Path) -> None:
    reports = by_where(check_pins(scan_path(data_dir / "checkproj").pins, StoreSource(store)))
    l1, l2, tiny = reports["src/train.py:9"], reports["src/train.py:10"], reports["src/train.py:15"]
    assert l1.status == "affected" and l1.commit == ADVISED_SHAS["L1"]
    assert [h.severity for h in l1.hits] == [Severity.MEDIUM]  # the later template fix
    assert l2.status == "affected" and sorted(h.severity.value for h in l2.hits if h.severity) == ["high", "medium"]
    assert tiny.status == "clean" and tiny.commit == ADVISED_SHAS["T1"] and tiny.hits == ()  # prefix resolved
    # a commit the store does not hold is unknown, never clean
    assert reports["configs/eval.toml:4"].status == "unknown"
    assert "watch" in reports["configs/eval.toml:4"].note
    assert reports["src/train.py:25"].status == "unknown"  # dynamic revision
    assert reports["src/train.py:16"].status == reports["src/train.py:31"].status == "unpinned"
    statuses = {r.status for r in reports.values()}
    assert statuses == {"affected", "clean", "unknown", "unpinned"}


def test_fail_threshold(store: Store, data_dir: Path) -> None:
    reports = check_pins(scan_path(data_dir / "checkproj").pins, StoreSource(store))
    assert fails(reports, Severity.HIGH) and fails(reports, Severity.MEDIUM)
    assert not fails(reports, Severity.CRITICAL)
    only_l1 = [r for r in reports if r.commit == ADVISED_SHAS["L1"]]
    assert fails(only_l1, Severity.MEDIUM) and not fails(only_l1, Severity.HIGH)


def test_an_ambiguous_prefix_is_unknown_with_the_reason(store: Store, data_dir: Path) -> None:
    tiny = RepoId("acme", "tiny")
    extra = RevisionRecord("fedcba9" + "2" * 33, ADVISED_SHAS["T2"], datetime(2024, 7, 1, tzinfo=timezone.utc), "x")
    assert store.save_revision(tiny, extra, [], {}, [], None, [])
    [report] = [r for r in check_pins(scan_path(data_dir / "checkproj").pins, StoreSource(store))
                if r.pin.where == "src/train.py:15"]
    assert report.status == "unknown" and "several" in report.note


def test_the_server_answers_like_the_store(store: Store, data_dir: Path) -> None:
    from hubwatch.feeds import create_app

    pins = scan_path(data_dir / "checkproj").pins
    local = check_pins(pins, StoreSource(store))
    with TestClient(create_app(Settings(), store)) as client:
        remote = check_pins(pins, ServerSource(client))
        hazard = next(h.id for r in local for h in r.hits if h.direction == "hazard")
        remote_ignoring = check_pins(pins, ServerSource(client), frozenset({hazard}))
    assert [(r.pin, r.status, r.commit, r.hits, r.suggestion) for r in remote] == [
        (r.pin, r.status, r.commit, r.hits, r.suggestion) for r in local]
    assert any(r.suggestion for r in local)
    local_ignoring = check_pins(pins, StoreSource(store), frozenset({hazard}))
    assert [(r.hits, r.suggestion) for r in remote_ignoring] == [(r.hits, r.suggestion) for r in local_ignoring]
    assert any(h.ignored for r in local_ignoring for h in r.hits)


def test_a_dataset_pin_is_never_answered_as_the_model_of_the_same_name(store: Store, data_dir: Path) -> None:
    [model] = [r for r in check_pins(scan_path(data_dir / "checkproj").pins, StoreSource(store))
               if r.pin.where == "src/train.py:9"]
    text = f'load_dataset("{model.pin.repo}", revision="{model.pin.revision}")\n'
    [report] = check_pins(scan_text(text, "d.py", "python")[0], StoreSource(store))
    assert model.status == "affected" and report.pin.repo.hub_id == model.pin.repo.hub_id
    assert report.pin.repo != model.pin.repo and report.pin.repo.is_dataset
    assert report.status == "unknown" and report.hits == () and f"datasets/{model.pin.repo}" in report.note
    assert not fails([report], Severity.LOW)


def test_a_dataset_pin_is_answered_from_the_dataset_history(tmp_path: Path) -> None:
    """A stored dataset history with an update advisory (fixed at the second commit) answers
    `load_dataset` pins: the first commit is affected, the second clean; the model of the same
    org/name, stored with no advisory, is not asked."""
    import hashlib

    from hubwatch.domain.records import AdvisoryRecord

    data, model = RepoId.parse("datasets/acme/reviews"), RepoId.parse("acme/reviews")
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    old, new = (hashlib.sha1(label.encode()).hexdigest() for label in ("d1", "d2"))
    osv = {"schema_version": "1.7.5", "id": "HW-D1", "modified": "2026-01-02T00:00:00Z",
           "published": "2026-01-02T00:00:00Z", "summary": "train split relabelled",
           "affected": [{"package": {"ecosystem": "GIT", "name": data.url()},
                         "ranges": [{"type": "GIT", "repo": data.url(),
                                     "events": [{"introduced": "0"}, {"fixed": new}]}]}]}  # fmt: skip
    with Store.open(f"sqlite:///{tmp_path / 'hw.db'}") as store:
        store.watch(data)
        store.watch(model)
        store.save_revision(data, RevisionRecord(old, None, t0, "v1", "", ()), [], {}, [], None, [])
        store.save_revision(data, RevisionRecord(new, old, t0, "v2", "", ()), [], {}, [], None,
                            [AdvisoryRecord("HW-D1", data, new, osv, t0)])
        store.save_revision(model, RevisionRecord(old, None, t0, "m1", "", ()), [], {}, [], None, [])
        text = (f'load_dataset("acme/reviews", revision="{old}")\nload_dataset("acme/reviews", revision="{new[:10]}")\n'
                f'from_pretrained("acme/reviews", revision="{old}")\n')
        pins = scan_text(text, "train.py", "python")[0]
        affected, clean, as_model = check_pins(pins, StoreSource(store))
        from hubwatch.feeds import create_app

        with TestClient(create_app(Settings(), store)) as client:  # `check --server` gives the same answers
            remote = check_pins(pins, ServerSource(client))
    assert [(r.pin, r.status, r.commit, r.hits) for r in remote] == [
        (r.pin, r.status, r.commit, r.hits) for r in (affected, clean, as_model)]
    assert affected.pin.name == "datasets/acme/reviews" and affected.status == "affected"
    assert [h.id for h in affected.hits] == ["HW-D1"] and affected.commit == old
    assert clean.status == "clean" and clean.commit == new
    assert as_model.pin.name == "acme/reviews" and as_model.status == "clean" and as_model.hits == ()
