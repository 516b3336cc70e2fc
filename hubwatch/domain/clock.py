"""The clock: one type for "now" (a tz-aware UTC datetime), created once in wiring and passed down."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

__all__ = ["Clock", "fixed_clock", "system_clock"]

# What every "now" in hubwatch comes from: the tracker's poll times, the store's stamps, the web
# app's ages. Built in `hubwatch.wiring` (or a test) and handed to each piece that needs it.
Clock = Callable[[], datetime]


def system_clock() -> datetime:
    """The wall clock, in UTC."""
    return datetime.now(UTC)


def fixed_clock(at: datetime) -> Clock:
    """A clock that always reads `at` (tz-aware; converted to UTC), for tests and replays."""
    if at.tzinfo is None:
        raise ValueError(f"{at.isoformat()} has no time zone: a clock reads tz-aware UTC times")
    fixed = at.astimezone(UTC)
    return lambda: fixed
