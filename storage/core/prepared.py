"""Statements built once and reused, for the writes every stored revision makes.

SQLAlchemy finds a statement's compiled form in its cache by a key it derives from the statement's
structure, and keeps that key on the statement object. A statement built inside each call pays for
building it and for that key every time (most of a small write's Python time); one built here, once
per dialect, with its values as bound parameters, pays only for its parameters. What is executed,
and what is stored, is the same.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from sqlalchemy.engine import Connection

__all__ = ["Prepared"]

S = TypeVar("S")


class Prepared(Generic[S]):
    """A statement built by `build(dialect name)` on first use with each dialect, then reused."""

    def __init__(self, build: Callable[[str], S]) -> None:
        self._build = build
        self._built: dict[str, S] = {}
        self._lock = threading.Lock()

    def __call__(self, conn: Connection) -> S:
        name = conn.dialect.name
        found = self._built.get(name)
        if found is None:
            with self._lock:
                found = self._built.get(name)
                if found is None:
                    found = self._built[name] = self._build(name)
        return found
