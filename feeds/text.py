"""Text helpers for hostile remote content: XML-illegal characters, dates and human-readable numbers."""

from __future__ import annotations

import re
from datetime import UTC, datetime

__all__ = ["as_utc", "fmt_bytes", "fmt_count", "rfc3339", "short_sha", "xml_safe"]

# Characters outside XML 1.0's Char production (C0 controls except tab/LF/CR, lone surrogates,
# U+FFFE/U+FFFF), plus the C1 controls, which XML allows but no reader wants to see.
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """`text` without the characters XML 1.0 forbids (they would make a feed unparseable)."""
    return _ILLEGAL.sub("", text)


def as_utc(moment: datetime) -> datetime:
    """A timezone-aware UTC datetime (stored naive datetimes are UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def rfc3339(moment: datetime) -> str:
    """RFC 3339 in UTC with a `Z`, seconds precision: `2024-07-23T15:44:01Z`."""
    return as_utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def short_sha(sha: str) -> str:
    return sha[:7]


def _scaled(value: float | int | None, units: tuple[str, str, str, str], plain: str) -> str:
    """`value` in the largest of T/G/M/k (10¹² … 10³) it reaches, 2 decimals; '—' for None."""
    if value is None:
        return "—"
    number = float(value)
    for bound, suffix in zip((1e12, 1e9, 1e6, 1e3), units):
        if abs(number) >= bound:
            return f"{number / bound:.2f} {suffix}"
    return f"{int(number)}{plain}"


def fmt_count(value: float | int | None) -> str:
    """A parameter count for people: 6738415616 → '6.74 B'."""
    return _scaled(value, ("T", "B", "M", "K"), "")


def fmt_bytes(value: float | int | None) -> str:
    """A size for people in decimal units, as the estimator reports them: 26624000000 → '26.62 GB'."""
    return _scaled(value, ("TB", "GB", "MB", "kB"), " B")
