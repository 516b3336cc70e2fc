"""Column types that behave the same on SQLite and PostgreSQL (UTC timestamps)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from hubwatch.storage.errors import InvalidRecord
from sqlalchemy.engine import Dialect

__all__ = ["UTCDateTime", "as_utc"]


def as_utc(value: datetime, what: str = "timestamp") -> datetime:
    """Return `value` in UTC; a naive datetime is refused (we never guess a time zone)."""
    if not isinstance(value, datetime):
        raise InvalidRecord(f"{what} must be a datetime, got {type(value).__name__}: {value!r}")
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise InvalidRecord(
            f"{what} {value.isoformat()} has no time zone: pass a tz-aware datetime (e.g. datetime.now(UTC))"
        )
    return value.astimezone(UTC)


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """A timestamp stored in UTC: tz-aware in, tz-aware (UTC) out, on every backend.

    SQLite has no time zones, so the value is stored as naive UTC there and the zone is
    put back on the way out; PostgreSQL stores `timestamptz`.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        utc = as_utc(value)
        return utc.replace(tzinfo=None) if dialect.name == "sqlite" else utc

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
