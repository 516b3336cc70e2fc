"""Idempotent inserts: INSERT … ON CONFLICT DO NOTHING on SQLite and PostgreSQL alike.

For rows a unique constraint says exist once: a concurrent writer that got there first turns the
second insert into a no-op (rowcount 0) instead of a duplicate or an error.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

__all__ = ["dialect_insert", "insert_ignoring", "insert_of"]


def dialect_insert(conn: Connection, table: sa.Table) -> postgresql.Insert | sqlite.Insert:
    """The INSERT construct of `conn`'s dialect, which has ON CONFLICT (the store opens only SQLite
    and PostgreSQL: storage/core/engine.py refuses any other URL)."""
    return insert_of(conn.dialect.name, table)


def insert_of(dialect: str, table: sa.Table) -> postgresql.Insert | sqlite.Insert:
    """`dialect_insert` by the dialect's name (for statements built once: storage.prepared)."""
    if dialect == "sqlite":
        return sqlite.insert(table)
    return postgresql.insert(table)


def insert_ignoring(conn: Connection, table: sa.Table, conflict: Sequence[str]) -> sa.Insert:
    """An INSERT into `table` that does nothing when a row with the same `conflict` columns exists."""
    return dialect_insert(conn, table).on_conflict_do_nothing(index_elements=list(conflict))
