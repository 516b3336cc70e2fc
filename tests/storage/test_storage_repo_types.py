"""The store keeps models and datasets apart (issue 33): migration 0016 keeps every stored row a model;
which types are watched, a busy listing of one type, and 0017's per-type listing telemetry."""

from __future__ import annotations

import sqlalchemy as sa

from hubwatch.domain.records import RepoId, RepoType
from hubwatch.storage import Store
from storage_helpers import downgrade_to, rev, upgrade_to_head

MODEL, DATASET = RepoId.parse("org/name"), RepoId.parse("datasets/org/name")


def test_upgrade_from_0015_with_rows_keeps_them_models_with_their_history(database_url: str) -> None:
    with Store.open(database_url) as store:
        store.watch(MODEL)
        store.watch(RepoId.parse("other/m"))
        first = rev("r1")
        assert store.save_revision(MODEL, first, [], {}, [], None, [])
        engine = store.engine
        downgrade_to(engine, "0015_history_restores")
        with engine.connect() as conn:
            assert "repo_type" not in {c["name"] for c in sa.inspect(conn).get_columns("repos")}
        upgrade_to_head(engine)
        with engine.connect() as conn:
            types = conn.execute(sa.text("SELECT key, repo_type FROM repos ORDER BY key")).all()
        assert [tuple(t) for t in types] == [("org/name", "model"), ("other/m", "model")]
        assert [r.revision.sha for r in store.history(MODEL)] == [first.sha]
        assert store.watch(DATASET)  # a dataset of the same org/name is a new repo after the upgrade
        assert sorted(str(s.repo) for s in store.repos.watched()) == ["datasets/org/name", "org/name", "other/m"]


def test_a_model_and_a_dataset_of_one_name_coexist_and_never_mix(database_url: str) -> None:
    with Store.open(database_url) as store:
        assert store.watch(MODEL) and store.watch(DATASET)
        assert not store.watch(RepoId.parse("datasets/Org/Name"))  # the same dataset, another spelling
        first = rev("d1")
        assert store.save_revision(DATASET, first, [], {}, [], None, [])
        assert [r.revision.sha for r in store.history(DATASET)] == [first.sha] and store.history(MODEL) == []
        states = {s.repo: s for s in store.repos.watched()}
        assert {r.is_dataset for r in states} == {False, True}
        assert states[DATASET].revision_count == 1 and states[MODEL].revision_count == 0
        assert store.unwatch(DATASET)
        assert [s.repo for s in store.repos.watched()] == [MODEL] and not store.repos.watched()[0].repo.is_dataset


def test_watched_types_and_a_busy_listing_of_one_type_follow_the_watch_list(database_url: str) -> None:
    from datetime import datetime, timedelta, timezone

    from hubwatch.domain.records import RepoType

    now = datetime(2026, 12, 7, tzinfo=timezone.utc)
    with Store.open(database_url) as store:
        assert store.repos.watched_types() == set()
        store.watch(MODEL)
        assert store.repos.watched_types() == {RepoType.MODEL}
        store.watch(DATASET)
        assert store.repos.watched_types() == {RepoType.MODEL, RepoType.DATASET}
        later = now + timedelta(hours=6)
        for repo in (MODEL, DATASET):
            store.repos.record_poll(repo, "ok", None, now)
            assert store.leases.claim_repo(repo, "w", now, 60) and store.leases.release(repo, "w", later)
        assert store.leases.mark_all_due(now, RepoType.DATASET) == 1  # the datasets' listing was too busy
        due = {s.repo: s.next_poll_at for s in store.repos.watched()}
        assert due[DATASET] is not None and due[DATASET].replace(tzinfo=timezone.utc) == now
        assert due[MODEL] is not None and due[MODEL].replace(tzinfo=timezone.utc) == later
        store.unwatch(MODEL)
        assert store.repos.watched_types() == {RepoType.DATASET}


def test_upgrade_from_0016_reads_no_datasets_listing_in_earlier_cycles(database_url: str) -> None:
    from datetime import datetime, timezone

    from hubwatch.storage.ops.telemetry import CycleReport

    at = datetime(2026, 12, 7, tzinfo=timezone.utc)
    with Store.open(database_url) as store:
        store.telemetry.record_cycle(CycleReport("w", at, at, "ok", datasets_listing="busy"))
        downgrade_to(store.engine, "0016_repo_types")
        with store.engine.connect() as conn:
            assert "datasets_listing" not in {c["name"] for c in sa.inspect(conn).get_columns("poll_cycles")}
        upgrade_to_head(store.engine)
        latest = store.telemetry.cycle_totals().latest
        assert latest is not None and (latest.listing, latest.datasets_listing) == ("ok", "none")
        store.telemetry.record_cycle(CycleReport("w", at, at, "failed", datasets_listing="ok"))
        assert store.telemetry.cycle_totals().cycles == 2


def test_the_watch_list_of_one_type_is_read_page_by_page(database_url: str) -> None:
    with Store.open(database_url) as store:
        for text in ("a/m", "datasets/a/d", "b/m", "datasets/b/d", "datasets/c/d", "c/unwatched"):
            store.watch(RepoId.parse(text))
        store.unwatch(RepoId.parse("c/unwatched"))
        models = store.repos.watched(repo_type=RepoType.MODEL)
        datasets = store.repos.watched(repo_type=RepoType.DATASET, limit=2)
        assert [str(s.repo) for s in models] == ["a/m", "b/m"]
        assert [str(s.repo) for s in datasets] == ["datasets/a/d", "datasets/b/d"]
        after = store.repos.watched(repo_type=RepoType.DATASET, after=datasets[-1].repo)
        assert [str(s.repo) for s in after] == ["datasets/c/d"]
        assert len(store.repos.watched()) == 5
