"""Migrations apply on SQLite and PostgreSQL, are idempotent, match the models; bad URLs fail clearly."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from hubwatch.storage import DatabaseUnavailable, InvalidDatabaseUrl, StorageError, Store, migrate
from hubwatch.storage.core.engine import create_engine
from hubwatch.storage.migrate import current_revision, head_revision
from sqlmodel import SQLModel

TABLES = {
    "repos",
    "revisions",
    "blobs",
    "file_versions",
    "changes",
    "estimates",
    "advisories",
    "advisory_events",
    "poll_runs",
    "history_rewrites",
}


def test_open_migrates_to_head_and_again_is_a_noop(database_url: str) -> None:
    with Store.open(database_url) as store:
        names = set(sa.inspect(store.engine).get_table_names())
        assert TABLES <= names and "alembic_version" in names
        assert current_revision(store.engine) == head_revision()
    # A second open (and the helper) on the migrated database changes nothing and keeps the data.
    with Store.open(database_url) as store:
        from hubwatch.domain.records import RepoId

        assert store.watch(RepoId("org", "a"))
    assert migrate(database_url) == head_revision()
    with Store.open(database_url) as store:
        assert [s.repo.name for s in store.repos.watched()] == ["a"]
        with store.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM alembic_version")).scalar_one() == 1


def test_migrations_match_the_models(database_url: str) -> None:
    migrate(database_url)
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": True})
            diffs = compare_metadata(ctx, SQLModel.metadata)
    finally:
        engine.dispose()
    assert diffs == []


def test_sqlite_runs_in_wal_mode_with_foreign_keys(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'w.db'}") as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar_one() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar_one() == 1


def test_in_memory_sqlite_works() -> None:
    from hubwatch.domain.records import RepoId

    with Store.open("sqlite://") as store:
        assert store.watch(RepoId("org", "m"))
        assert [s.repo for s in store.repos.watched()] == [RepoId("org", "m")]


@pytest.mark.parametrize("url", ["", "not a url", "mysql://u:p@localhost/db", "postgresql://u:p@localhost"])
def test_bad_urls_are_rejected_with_a_fix(url: str) -> None:
    with pytest.raises(InvalidDatabaseUrl) as info:
        Store.open(url)
    assert "HUBWATCH_DATABASE_URL" in info.value.fix
    assert ":p@" not in str(info.value)


def test_unreachable_postgres_names_the_url_without_password() -> None:
    url = "postgresql://hubwatch:s3cret@127.0.0.1:1/nowhere"
    with pytest.raises(DatabaseUnavailable) as info:
        Store.open(url)
    message = str(info.value)
    assert "s3cret" not in message and "127.0.0.1:1" in message and "nowhere" in message
    assert "start PostgreSQL" in info.value.fix
    assert isinstance(info.value, StorageError)


def test_sqlite_in_a_missing_folder_says_so(tmp_path: Path) -> None:
    with pytest.raises(DatabaseUnavailable) as info:
        Store.open(f"sqlite:///{tmp_path / 'missing' / 'x.db'}")
    assert "missing" in str(info.value) and "folder" in info.value.fix


def test_workers_starting_together_migrate_once(database_url: str) -> None:
    import threading

    errors: list[BaseException] = []
    barrier = threading.Barrier(3)

    def open_and_close() -> None:
        try:
            barrier.wait()
            Store.open(database_url).close()
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    threads = [threading.Thread(target=open_and_close) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    engine = create_engine(database_url)
    try:
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_public_interface(database_url: str) -> None:
    from hubwatch import storage

    assert set(storage.__all__) >= {"Store", "RepoState", "HistoryEntry", "FeedItem", "StorageError", "migrate"}
    for name in storage.__all__:
        assert getattr(storage, name) is not None
    # The facade keeps what several features share; each feature's queries sit behind its own store.
    public = [name for name in dir(Store) if not name.startswith("_")]  # methods and properties, inherited too
    assert len(public) <= 25, public
    for method in ["open", "close", "watch", "unwatch", "save_revision", "head", "history", "revision", "summary",
                   "blob", "notify", "derivatives"]:  # fmt: skip
        assert callable(getattr(Store, method)), method
    from hubwatch.storage.advisories.store import Advisories
    from hubwatch.storage.ops.leases import Leases
    from hubwatch.storage.ops.telemetry import Telemetry
    from hubwatch.storage.repos.store import Repos
    from hubwatch.storage.revisions.store import Revisions

    features = {
        "repos": (Repos, ["watched", "record_poll", "recent_changes", "rename_repo"]),
        "revisions": (Revisions, ["known_shas", "history_page", "record_rewrite", "revision_shas"]),
        "advisories": (Advisories, ["records", "get", "affecting", "for_commit", "to_plan", "standing_reads"]),
        "leases": (Leases, ["claim_due", "release", "defer_hub"]),
        "telemetry": (Telemetry, ["record_cycle", "live_workers"]),
    }
    with Store.open(database_url) as store:
        for attr, (kind, methods) in features.items():
            feature = getattr(store, attr)
            assert isinstance(feature, kind), attr
            assert feature.engine is store.engine, attr  # the same database, each call its own transaction
            for method in methods:
                assert callable(getattr(feature, method)), f"{attr}.{method}"


def test_direction_names_migrate_both_ways_and_ids_stay(database_url: str) -> None:
    """0003: stored 'risk'/'fix' become 'hazard'/'update' (rows and OSV JSON); ids are untouched."""
    from hubwatch.domain.records import RepoId
    from hubwatch.diff.changes import HAZARD, UPDATE, make_change
    from hubwatch.domain.records import Kind, Severity
    from storage_helpers import advisory, downgrade_to, rev, upgrade_to_head

    def change(direction: object) -> object:
        return make_change(Kind.CONTEXT, Severity.MEDIUM, file="config.json", key=f"k{direction}", old=1, new=2,
                           summary="k changed", direction=direction)  # type: ignore[arg-type]  # fmt: skip

    repo = RepoId("org", "m")
    with Store.open(database_url) as store:
        store.watch(repo)
        record = advisory(repo, "x_HW-1", "r2", [{"introduced": "0"}, {"fixed": "r2"}])
        osv = {**record.osv, "database_specific": {"direction": "update", "changes": [
            {"direction": "update", "detail": {"direction": "update"}}]}}  # fmt: skip
        assert store.save_revision(repo, rev("r1"), [], {}, [], None, [])
        assert store.save_revision(repo, rev("r2", "r1", day=1), [], {},
                                   [change(UPDATE), change(HAZARD)], None,
                                   [type(record)(record.id, record.repo, record.revision_sha, osv, record.modified)])  # fmt: skip
        engine = store.engine

        def stored() -> tuple[list[str], list[str], dict[str, object]]:
            with engine.connect() as conn:
                rows = conn.execute(sa.text("SELECT direction, detail FROM changes ORDER BY ordinal")).all()
                (osv_text,) = conn.execute(sa.text("SELECT osv FROM advisories WHERE id = 'x_HW-1'")).one()
            import json

            details = [d if isinstance(d, dict) else json.loads(d) for _, d in rows]
            value = osv_text if isinstance(osv_text, dict) else json.loads(osv_text)
            return [r[0] for r in rows], [str(d.get("direction")) for d in details], value

        downgrade_to(engine, "0002_history_rewrites")
        directions, detail_directions, old_osv = stored()
        assert directions == ["fix", "risk"] and detail_directions == ["fix", "risk"]
        assert old_osv["database_specific"]["direction"] == "fix"  # type: ignore[index]
        upgrade_to_head(engine)
        directions, detail_directions, new_osv = stored()
        assert directions == ["update", "hazard"] and detail_directions == ["update", "hazard"]
        ds = new_osv["database_specific"]  # type: ignore[index]
        assert ds["direction"] == "update" and ds["changes"][0]["direction"] == "update"  # type: ignore[index]
        assert new_osv["id"] == "x_HW-1"
        assert [c.direction for c in store.history(repo)[-1].changes] == ["update", "hazard"]
