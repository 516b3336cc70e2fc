"""Migrations apply on SQLite and PostgreSQL, are idempotent, match the models; bad URLs fail clearly."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from hubwatch.storage import DatabaseUnavailable, InvalidDatabaseUrl, StorageError, Store, migrate
from hubwatch.storage.engine import create_engine
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
        assert [s.repo.name for s in store.watched()] == ["a"]
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
        assert [s.repo for s in store.watched()] == [RepoId("org", "m")]


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


def test_public_interface() -> None:
    from hubwatch import storage

    assert set(storage.__all__) >= {"Store", "RepoState", "HistoryEntry", "FeedItem", "StorageError", "migrate"}
    for name in storage.__all__:
        assert getattr(storage, name) is not None
    for method in [
        "open",
        "watch",
        "unwatch",
        "watched",
        "known_shas",
        "head",
        "snapshot_files",
        "save_revision",
        "record_poll",
        "history",
        "revision",
        "advisories",
        "advisory",
        "advisories_affecting",
        "advisories_for_commit",
        "recent_changes",
        "blob",
        "claim_due",
        "release",
        "close",
    ]:
        assert callable(getattr(Store, method)), method
