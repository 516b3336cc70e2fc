"""Apply the Alembic migrations shipped inside the package (no alembic.ini needed at run time)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from hubwatch.storage.engine import create_engine, redact, write_transaction
from hubwatch.storage.errors import MigrationFailed
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import SQLAlchemyError

__all__ = ["alembic_config", "current_revision", "head_revision", "migrate", "upgrade_engine"]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# Any constant works; it only has to be the same for every hubwatch process on one server.
_PG_MIGRATION_LOCK = 0x68756277  # "hubw"


def alembic_config() -> Config:
    """An Alembic config pointing at the package's migrations folder."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade_engine(engine: Engine) -> None:
    """Bring the schema of `engine`'s database to head; a no-op when it already is.

    Concurrent callers are serialised (PostgreSQL: a transaction-level advisory lock;
    SQLite: BEGIN IMMEDIATE), so several workers may start at once.
    """
    if current_revision(engine) == head_revision():
        return
    cfg = alembic_config()
    try:
        with write_transaction(engine) as conn:
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_PG_MIGRATION_LOCK})")
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
    except SQLAlchemyError as exc:
        raise MigrationFailed(f"migrating the database at {redact(engine.url)!r} failed: {exc}") from exc


def migrate(url: str | URL) -> str:
    """Open the database at `url`, migrate it to head and return the head revision id."""
    engine = create_engine(url)
    try:
        upgrade_engine(engine)
    finally:
        engine.dispose()
    return head_revision()
