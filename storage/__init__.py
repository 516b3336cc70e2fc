"""The store: schema (SQLModel), migrations (Alembic) and every query hubwatch makes."""

if __name__ != "hubwatch.storage":  # this folder is on sys.path as the repo root; one name only
    raise ImportError(f"import hubwatch.storage, not {__name__}: the folder storage/ is installed as hubwatch.storage")

from hubwatch.storage.errors import (
    AmbiguousRevision,
    DatabaseUnavailable,
    InvalidDatabaseUrl,
    InvalidRecord,
    MigrationFailed,
    StorageError,
)
from hubwatch.storage.migrate import migrate
from hubwatch.storage.stats import StoreStats
from hubwatch.storage.store import Store
from hubwatch.storage.values import FeedItem, HistoryEntry, HistoryRewrite, RepoState

__all__ = [
    "AmbiguousRevision",
    "DatabaseUnavailable",
    "FeedItem",
    "HistoryEntry",
    "HistoryRewrite",
    "InvalidDatabaseUrl",
    "InvalidRecord",
    "MigrationFailed",
    "RepoState",
    "StorageError",
    "Store",
    "StoreStats",
    "migrate",
]
