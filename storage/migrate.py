"""Apply the Alembic migrations shipped inside the package (no alembic.ini needed at run time).

Alembic and SQLAlchemy are imported inside the functions: `hubwatch.storage` re-exports
`migrate`, and importing the package (for its errors, say) must not load a database layer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hubwatch.storage.errors import MigrationFailed

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.engine import URL, Engine

__all__ = ["alembic_config", "current_revision", "head_revision", "migrate", "upgrade_engine"]

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

    from hubwatch.storage.core.engine import redact, write_transaction

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
    from hubwatch.storage.core.engine import create_engine

    engine = create_engine(url)
    try:
        upgrade_engine(engine)
    finally:
        engine.dispose()
    return head_revision()
