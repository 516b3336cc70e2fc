"""One UTC rule (naive datetimes refused, naming the value) and one RFC 3339 form, used everywhere."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from hubwatch.domain.times import NaiveDatetime, as_utc, rfc3339
from hubwatch.feeds import text
from hubwatch.storage.core.coltypes import checked_utc
from hubwatch.storage.errors import InvalidRecord

PARIS = timezone(timedelta(hours=2))


def test_aware_times_become_utc() -> None:
    local = datetime(2024, 6, 1, 14, 30, 5, 999_000, tzinfo=PARIS)
    assert as_utc(local) == datetime(2024, 6, 1, 12, 30, 5, 999_000, tzinfo=UTC)
    assert as_utc(local).utcoffset() == timedelta(0)
    assert rfc3339(local) == "2024-06-01T12:30:05Z"  # whole seconds, Z


def test_a_naive_time_is_refused_naming_what_and_the_value() -> None:
    naive = datetime(2024, 1, 1, 12)
    with pytest.raises(NaiveDatetime, match=r"poll time 2024-01-01T12:00:00 has no time zone"):
        as_utc(naive, "poll time")
    with pytest.raises(NaiveDatetime, match=r"timestamp 2024-01-01T12:00:00 has no time zone"):
        rfc3339(naive)
    with pytest.raises(NaiveDatetime, match="must be a datetime, got str: '2024-01-01'"):
        as_utc("2024-01-01")  # type: ignore[arg-type]
    assert issubclass(NaiveDatetime, ValueError)


def test_storage_and_feeds_use_the_same_rule() -> None:
    assert text.as_utc is as_utc and text.rfc3339 is rfc3339
    with pytest.raises(InvalidRecord, match="claim time 2024-01-01T12:00:00 has no time zone"):
        checked_utc(datetime(2024, 1, 1, 12), "claim time")
    assert checked_utc(datetime(2024, 1, 1, 14, tzinfo=PARIS)) == datetime(2024, 1, 1, 12, tzinfo=UTC)
