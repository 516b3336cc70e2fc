"""Time values every room shares: one UTC rule (naive datetimes are refused) and one RFC 3339 form."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["NaiveDatetime", "as_utc", "rfc3339"]


class NaiveDatetime(ValueError):
    """A datetime without a time zone, or not a datetime at all: hubwatch never guesses a zone."""


def as_utc(moment: datetime, what: str = "timestamp") -> datetime:
    """`moment` converted to UTC; a naive datetime (or a non-datetime) raises NaiveDatetime naming it."""
    if not isinstance(moment, datetime):
        raise NaiveDatetime(f"{what} must be a datetime, got {type(moment).__name__}: {moment!r}")
    if moment.tzinfo is None or moment.tzinfo.utcoffset(moment) is None:
        raise NaiveDatetime(
            f"{what} {moment.isoformat()} has no time zone: pass a tz-aware datetime (e.g. datetime.now(UTC))"
        )
    return moment.astimezone(UTC)


def rfc3339(moment: datetime, what: str = "timestamp") -> str:
    """RFC 3339 in UTC with a `Z`, whole seconds: `2024-07-23T15:44:01Z` (naive datetimes are refused)."""
    return as_utc(moment, what).strftime("%Y-%m-%dT%H:%M:%SZ")
