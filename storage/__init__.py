"""The store: schema (SQLModel), migrations (Alembic) and every query hubwatch makes."""

if __name__ != "hubwatch.storage":  # this folder is on sys.path as the repo root; one name only
    raise ImportError(f"import hubwatch.storage, not {__name__}: the folder storage/ is installed as hubwatch.storage")

from typing import TYPE_CHECKING, Any

from hubwatch.storage.errors import (
    AmbiguousRevision,
    DatabaseUnavailable,
    InvalidDatabaseUrl,
    InvalidRecord,
    MigrationFailed,
    StorageError,
)
from hubwatch.storage.migrate import migrate  # light: Alembic loads when it runs

if TYPE_CHECKING:
    from hubwatch.storage.ops.stats import StoreStats
    from hubwatch.storage.store import Store
    from hubwatch.storage.core.values import FeedItem, HistoryEntry, HistoryRestore, HistoryRewrite, RepoRename, RepoState

# The errors are plain Python; the rest loads SQLAlchemy and Alembic, so it is imported on first
# use: `hubwatch --help` or code that only catches a StorageError never pays for a database layer.
_LAZY = {
    "StoreStats": "hubwatch.storage.ops.stats",
    "Store": "hubwatch.storage.store",
    "FeedItem": "hubwatch.storage.core.values",
    "HistoryEntry": "hubwatch.storage.core.values",
    "HistoryRestore": "hubwatch.storage.core.values",
    "HistoryRewrite": "hubwatch.storage.core.values",
    "RepoRename": "hubwatch.storage.core.values",
    "RepoState": "hubwatch.storage.core.values",
}


def __getattr__(name: str) -> Any:
    import importlib

    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value

__all__ = [
    "AmbiguousRevision",
    "DatabaseUnavailable",
    "FeedItem",
    "HistoryEntry",
    "HistoryRestore",
    "HistoryRewrite",
    "InvalidDatabaseUrl",
    "InvalidRecord",
    "MigrationFailed",
    "RepoRename",
    "RepoState",
    "StorageError",
    "Store",
    "StoreStats",
    "migrate",
]
