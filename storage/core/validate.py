"""Checks on records handed to the store, so bad input fails with a message naming what was wrong."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from hubwatch.storage.core.coltypes import checked_utc
from hubwatch.storage.errors import InvalidRecord
from hubwatch.domain.records import ChangeRecord, Direction, FileRecord, Kind, RevisionRecord, Severity, is_commit_sha

__all__ = [
    "as_prefix",
    "check_change",
    "check_files",
    "check_json",
    "check_revision",
    "clean_text",
    "is_storable",
]

_HEX = re.compile(r"[0-9a-f]+")
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
MIN_PREFIX = 7


def clean_text(text: str) -> str:
    """Text as every backend stores it: NUL (PostgreSQL refuses it) and lone surrogates (not UTF-8,
    e.g. from a hostile JSON "\\ud800") become U+FFFD. JSON columns need no cleaning: they are escaped."""
    if not isinstance(text, str):
        raise InvalidRecord(f"expected text, got {type(text).__name__}: {text!r}")
    return _UNSTORABLE.sub("\ufffd", text)


def is_storable(text: str) -> bool:
    """True when every backend stores `text` as given (no NUL, no lone surrogate). Identifiers
    (advisory ids, worker ids, estimator versions) must be: cleaning them would change them."""
    return _UNSTORABLE.search(text) is None


def check_json(value: Any, what: str) -> None:
    """`value` must be plain JSON (no NaN/Infinity, str keys): it is stored in a JSON column."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidRecord(f"{what} is not storable as JSON: {exc}") from exc


def check_revision(rev: RevisionRecord) -> None:
    if not is_commit_sha(rev.sha):
        raise InvalidRecord(f"revision sha {rev.sha!r} is not a 40-hex lowercase commit sha")
    if rev.parent is not None and not is_commit_sha(rev.parent):
        raise InvalidRecord(f"parent {rev.parent!r} of revision {rev.sha} is not a 40-hex commit sha")
    checked_utc(rev.date, f"date of revision {rev.sha}")
    if not all(isinstance(a, str) for a in rev.authors):
        raise InvalidRecord(f"authors of revision {rev.sha} must be strings, got {rev.authors!r}")


def check_change(change: ChangeRecord, index: int) -> tuple[str, str, str]:
    """Validate one change; return its (kind, severity, direction) as stored text."""
    where = f"change #{index} ({getattr(change, 'path', '?')!r})"
    try:
        kind = Kind(change.kind).value
    except ValueError as exc:
        raise InvalidRecord(f"{where} has unknown kind {change.kind!r}") from exc
    try:
        severity = Severity(change.severity).value
    except ValueError as exc:
        raise InvalidRecord(f"{where} has unknown severity {change.severity!r}") from exc
    try:
        direction = Direction.parse(change.direction, where).value
    except ValueError as exc:
        raise InvalidRecord(str(exc)) from exc
    if not isinstance(change.detail, dict):
        raise InvalidRecord(f"{where}: detail must be a JSON object, got {type(change.detail).__name__}")
    check_json(change.detail, f"{where} detail")
    return kind, severity, direction


def check_files(files: Sequence[FileRecord], contents: Mapping[str, bytes]) -> None:
    counts = Counter(f.path for f in files)
    paths = set(counts)
    dupes = sorted(p for p, n in counts.items() if n > 1)
    if dupes:
        raise InvalidRecord(f"file listing names {', '.join(map(repr, dupes))} more than once")
    missing = sorted(set(contents) - paths)
    if missing:
        raise InvalidRecord(f"contents given for {', '.join(map(repr, missing))}, which the file listing does not have")


def as_prefix(sha: object) -> str | None:
    """The lowercase hex commit prefix (7..40 characters) `sha` is, or None when it is not one.

    Lookups use this: text that cannot be a commit (a branch name, 4 characters) matches nothing.
    """
    text = sha.lower() if isinstance(sha, str) else ""  # matched in full: "abc1234\n" is no prefix
    return text if MIN_PREFIX <= len(text) <= 40 and _HEX.fullmatch(text) else None


def prefix_match(column: Any, prefix: str) -> Any:
    """The condition that `column` (full lowercase shas) starts with the hex `prefix` (`as_prefix`):
    equality for a full sha, else a range [prefix, prefix + "g") that a b-tree index on the column
    answers ("g" sorts after every hex digit, so only shas that start so lie in it), where `LIKE
    'abc%'` scans every row on SQLite and on PostgreSQL outside the C collation."""
    return column == prefix if len(prefix) == 40 else sa.and_(column >= prefix, column < prefix + "g")
