"""The store: schema (SQLModel), migrations (Alembic) and every query hubwatch makes."""

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
