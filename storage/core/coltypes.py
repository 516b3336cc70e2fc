"""Column types that behave the same on SQLite and PostgreSQL (UTC timestamps), and the UTC check."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from hubwatch.domain.times import NaiveDatetime, as_utc
from hubwatch.storage.errors import InvalidRecord
from sqlalchemy.engine import Dialect

__all__ = ["UTCDateTime", "checked_utc"]


def checked_utc(value: datetime, what: str = "timestamp") -> datetime:
    """`value` in UTC by the domain's one rule (`as_utc`: naive refused), as the store's InvalidRecord."""
    try:
        return as_utc(value, what)
    except NaiveDatetime as exc:
        raise InvalidRecord(str(exc)) from exc


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
        utc = checked_utc(value)
        return utc.replace(tzinfo=None) if dialect.name == "sqlite" else utc

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
