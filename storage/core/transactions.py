"""One way to run a read or a write against an engine, with SQLAlchemy's errors turned into ours.

`Store`, `NotifyStore` and `Derivatives` each hold an engine and run every call in its own
connection and transaction through these helpers, so a database failure reads the same
(`DatabaseUnavailable` naming the URL, password hidden) whichever of them met it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from hubwatch.storage.core.engine import redact, write_transaction
from hubwatch.storage.errors import DatabaseUnavailable, StorageError
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError, SQLAlchemyError

__all__ = ["Transactions"]

T = TypeVar("T")


class Transactions:
    """An engine and the read/write helpers over it; subclasses set `self.engine`."""

    engine: Engine

    @property
    def url(self) -> str:
        """The database URL, password hidden."""
        return redact(self.engine.url)

    def _wrap(self, exc: SQLAlchemyError) -> StorageError:
        if isinstance(exc, OperationalError):
            return DatabaseUnavailable(f"database at {self.url!r} failed: {str(exc.orig or exc).strip()}")
        return StorageError(f"database at {self.url!r}: {exc}")

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        try:
            with self.engine.connect() as conn, conn.begin():
                yield conn
        except SQLAlchemyError as exc:
            raise self._wrap(exc) from exc

    def _write(self, fn: Callable[[Connection], T]) -> T:
        try:
            with write_transaction(self.engine) as conn:
                return fn(conn)
        except SQLAlchemyError as exc:
            raise self._wrap(exc) from exc
