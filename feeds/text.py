"""Text helpers for hostile remote content: XML-illegal characters, dates and human-readable numbers.

`as_utc` and `rfc3339` are the domain's (hubwatch.domain.times), offered here beside the other
text helpers the feed modules use; a naive datetime is refused there, never guessed.
"""

from __future__ import annotations

import math
import re

from hubwatch.domain.records import RepoId
from hubwatch.domain.times import as_utc, rfc3339

__all__ = ["as_utc", "fmt_amount", "fmt_bytes", "fmt_count", "page_path", "rfc3339", "short_sha", "xml_safe"]

# Characters outside XML 1.0's Char production (C0 controls except tab/LF/CR, lone surrogates,
# U+FFFE/U+FFFF), plus the C1 controls, which XML allows but no reader wants to see.
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """`text` without the characters XML 1.0 forbids (they would make a feed unparseable)."""
    return _ILLEGAL.sub("", text)


def page_path(repo: RepoId) -> str:
    """Where a repo's pages live in the app: `/models/org/name` for a model, `/datasets/org/name`
    for a dataset (the same `org/name` may be both; their pages never mix)."""
    return repo.page_path


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


def fmt_amount(value: float | int | None) -> str:
    """Money or hours for people: two decimals from 0.01 up (1234.5 → '1,234.50'), three significant digits
    below (a small run's 0.003125 → '0.00313', never '0.00'), '—' for None."""
    if value is None:
        return "—"
    if value == 0 or abs(value) >= 0.01:
        return f"{value:,.2f}"
    decimals = min(12, 2 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def fmt_bytes(value: float | int | None) -> str:
    """A size for people in decimal units, as the estimator reports them: 26624000000 → '26.62 GB'."""
    return _scaled(value, ("TB", "GB", "MB", "kB"), " B")
