"""Apply the Alembic migrations shipped inside the package (no alembic.ini needed at run time).

Alembic and SQLAlchemy are imported inside the functions: `hubwatch.storage` re-exports
`migrate`, and importing the package (for its errors, say) must not load a database layer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from hubwatch.storage.errors import MigrationFailed

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.engine import URL, Connection, Engine

__all__ = ["alembic_config", "current_revision", "head_revision", "migrate", "migration_transaction", "upgrade_engine"]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# Any constant works; it only has to be the same for every hubwatch process on one server.
_PG_MIGRATION_LOCK = 0x68756277  # "hubw"


def alembic_config() -> Config:
    """An Alembic config pointing at the package's migrations folder."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade_engine(engine: Engine) -> None:
    """Bring the schema of `engine`'s database to head; a no-op when it already is.

    Concurrent callers are serialised (PostgreSQL: a transaction-level advisory lock;
    SQLite: BEGIN IMMEDIATE), so several workers may start at once.
    """
    from alembic import command
    from sqlalchemy.exc import SQLAlchemyError

    from hubwatch.storage.core.engine import redact

    if current_revision(engine) == head_revision():
        return
    cfg = alembic_config()
    try:
        with migration_transaction(engine) as conn:
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_PG_MIGRATION_LOCK})")
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
    except SQLAlchemyError as exc:
        raise MigrationFailed(f"migrating the database at {redact(engine.url)!r} failed: {exc}") from exc


@contextmanager
def migration_transaction(engine: Engine) -> Iterator[Connection]:
    """The one write transaction migrations run in. On SQLite foreign keys are off for it (the
    pragma only takes effect outside a transaction) and checked before the commit: a migration
    that rebuilds a parent table (`repos`, 0016) must not delete its children through ON DELETE
    CASCADE when it drops the old copy; a dangling reference fails the migration instead."""
    from hubwatch.storage.core.engine import BEGIN_MODE, write_transaction

    if engine.dialect.name != "sqlite":
        with write_transaction(engine) as conn:
            yield conn
        return
    with engine.connect() as outer:
        raw = outer.connection.driver_connection  # the sqlite3 connection, in autocommit: no BEGIN before the pragma
        assert raw is not None
        raw.execute("PRAGMA foreign_keys=OFF")
        try:
            conn = outer.execution_options(**{BEGIN_MODE: "IMMEDIATE"})
            with conn.begin():
                yield conn
                dangling = conn.exec_driver_sql("PRAGMA foreign_key_check").first()
                if dangling is not None:
                    raise MigrationFailed(f"a migration left a dangling reference in {dangling[0]!r} (row {dangling[1]})")
        finally:
            raw.execute("PRAGMA foreign_keys=ON")


def migrate(url: str | URL) -> str:
    """Open the database at `url`, migrate it to head and return the head revision id."""
    from hubwatch.storage.core.engine import create_engine

    engine = create_engine(url)
    try:
        upgrade_engine(engine)
    finally:
        engine.dispose()
    return head_revision()
