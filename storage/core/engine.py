"""Turn a database URL into a configured SQLAlchemy engine (SQLite: WAL, foreign keys; PostgreSQL: psycopg)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from hubwatch.storage.errors import DatabaseUnavailable, InvalidDatabaseUrl
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlalchemy.pool import StaticPool

__all__ = ["BEGIN_MODE", "create_engine", "parse_url", "redact", "write_transaction"]

# Execution option read by the SQLite "begin" hook: "IMMEDIATE" takes the write lock at BEGIN,
# so two writers queue up instead of failing when a reader upgrades to a writer.
BEGIN_MODE = "hubwatch_sqlite_begin"
_SQLITE_BUSY_TIMEOUT_S = 30.0


def parse_url(url: str) -> URL:
    """Parse and normalise a database URL (postgresql:// → the psycopg 3 driver)."""
    if not isinstance(url, str) or not url.strip():
        raise InvalidDatabaseUrl(f"empty database URL {url!r}")
    try:
        parsed = sa.make_url(url.strip())
    except ArgumentError as exc:
        raise InvalidDatabaseUrl(f"cannot parse database URL {_redact_text(url)!r}: {exc}") from exc
    backend = parsed.get_backend_name()
    if backend in ("postgresql", "postgres"):
        if parsed.drivername in ("postgresql", "postgres", "postgresql+psycopg2"):
            parsed = parsed.set(drivername="postgresql+psycopg")
        if not parsed.database:
            raise InvalidDatabaseUrl(f"database URL {redact(parsed)!r} names no database (…/dbname)")
    elif backend != "sqlite":
        raise InvalidDatabaseUrl(
            f"database URL {redact(parsed)!r} uses {backend!r}: hubwatch supports sqlite and postgresql"
        )
    return parsed


def redact(url: URL) -> str:
    """The URL as text with any password replaced by *** (and without the driver we picked)."""
    if url.drivername == "postgresql+psycopg":
        url = url.set(drivername="postgresql")
    return url.render_as_string(hide_password=True)


def _redact_text(url: str) -> str:
    try:
        return redact(sa.make_url(url))
    except ArgumentError:
        # Unparseable: hide anything between ':' and '@' of a userinfo part.
        head, sep, tail = url.partition("@")
        if sep and "://" in head and ":" in head.split("://", 1)[1]:
            scheme, rest = head.split("://", 1)
            return f"{scheme}://{rest.split(':', 1)[0]}:***@{tail}"
        return url


def create_engine(url: str | URL) -> Engine:
    """A configured engine for `url`; connects once so a bad URL fails here, clearly."""
    parsed = parse_url(url) if isinstance(url, str) else url
    try:
        if parsed.get_backend_name() == "sqlite":
            engine = _sqlite_engine(parsed)
        else:
            engine = sa.create_engine(parsed, pool_pre_ping=True, connect_args={"connect_timeout": 10})
    except (ArgumentError, NoSuchModuleError) as exc:
        raise InvalidDatabaseUrl(f"cannot use database URL {redact(parsed)!r}: {exc}") from exc
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
    except DBAPIError as exc:
        engine.dispose()
        raise DatabaseUnavailable(
            f"cannot open the database at {redact(parsed)!r}: {_first_line(exc.orig or exc)}",
            fix=_unreachable_fix(parsed),
        ) from exc
    return engine


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _unreachable_fix(url: URL) -> str:
    if url.get_backend_name() == "sqlite":
        return "check that the folder of the SQLite file exists and is writable (HUBWATCH_DATABASE_URL)"
    return (
        f"start PostgreSQL on {url.host or 'localhost'}:{url.port or 5432}, create database "
        f"{url.database!r} and check the user and password in HUBWATCH_DATABASE_URL"
    )


def _enable_wal(cursor: Any) -> None:
    """Switch a new database file to WAL. SQLite answers "database is locked" at once, without its
    busy handler, when several connections make that switch together (workers starting on one new
    file), so the switch is retried within the busy timeout; a database already in WAL skips it."""
    import sqlite3
    import time

    deadline = time.monotonic() + _SQLITE_BUSY_TIMEOUT_S
    while True:
        try:
            if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _sqlite_engine(url: URL) -> Engine:
    memory = url.database in (None, "", ":memory:")
    kwargs: dict[str, Any] = {"connect_args": {"timeout": _SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False}}
    if memory:
        # One shared connection, or each connection would see its own empty database.
        kwargs["poolclass"] = StaticPool
    engine = sa.create_engine(url, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" hook below issue BEGIN itself (pysqlite's own is deferred only).
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys=ON")
            if not memory:
                _enable_wal(cursor)
                cursor.execute("PRAGMA synchronous=NORMAL")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get(BEGIN_MODE)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if mode == "IMMEDIATE" else "BEGIN")

    return engine


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """A connection inside one write transaction (SQLite: BEGIN IMMEDIATE), committed on success."""
    with engine.connect() as conn:
        conn = conn.execution_options(**{BEGIN_MODE: "IMMEDIATE"})
        with conn.begin():
            yield conn
