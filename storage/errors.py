"""Errors at the storage boundary: one base, each with a one-line fix for the CLI to print."""

from __future__ import annotations

__all__ = [
    "AmbiguousRevision",
    "DatabaseUnavailable",
    "InvalidDatabaseUrl",
    "InvalidRecord",
    "MigrationFailed",
    "StorageError",
]


class StorageError(Exception):
    """Base of every error raised by hubwatch.storage."""

    fix = "check HUBWATCH_DATABASE_URL and that the database is reachable"

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message)
        if fix is not None:
            self.fix = fix


class InvalidDatabaseUrl(StorageError):
    """The database URL cannot be parsed or names a database hubwatch does not support."""

    fix = (
        "set HUBWATCH_DATABASE_URL to sqlite:////absolute/path/hubwatch.db "
        "or postgresql://user:password@host:5432/dbname"
    )


class DatabaseUnavailable(StorageError):
    """The database named by the URL could not be opened or reached."""


class MigrationFailed(StorageError):
    """Applying the schema migrations failed."""

    fix = "check that the database user may create tables; run `hubwatch` with --debug for details"


class InvalidRecord(StorageError, ValueError):
    """A record handed to the store is malformed (unknown kind, duplicate id, naive timestamp, …)."""

    fix = "this is a bug in the caller: the record was rejected and nothing of it was stored"


class AmbiguousRevision(StorageError, LookupError):
    """A revision prefix matches more than one stored commit."""

    fix = "give more characters of the commit sha (up to the full 40)"
