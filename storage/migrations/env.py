"""Alembic environment: runs the migrations on the connection handed over by hubwatch.storage.migrate."""

from __future__ import annotations

from alembic import context
from hubwatch.storage.core import tables  # noqa: F401  (registers the tables on SQLModel.metadata)
from hubwatch.storage.derivatives import derivatives  # noqa: F401  (and the derivatives tables)
from hubwatch.storage.core.engine import parse_url
from sqlalchemy import create_engine
from sqlmodel import SQLModel

config = context.config
target_metadata = SQLModel.metadata


def _run(connection: object) -> None:
    context.configure(
        connection=connection,  # type: ignore[arg-type]
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # type: ignore[attr-defined]
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    given = config.attributes.get("connection")
    if given is not None:
        _run(given)
    else:  # `alembic -c storage/alembic.ini …` from a developer's shell
        engine = create_engine(parse_url(config.get_main_option("sqlalchemy.url") or "sqlite:///hubwatch.db"))
        with engine.begin() as conn:
            _run(conn)
        engine.dispose()
