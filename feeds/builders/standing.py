"""A pin's standing as the web app shows it: loaded from the store, said in one line, and each record's
relation to the revision a page shows ("update published at X: a pin here lacks it")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hubwatch.advisories.pin_standing import standing_at
from hubwatch.domain.gitrange import git_events
from hubwatch.advisories.standing import (
    Standing, advisory_direction, advisory_severity, off_the_main_line, standing,
)
from hubwatch.domain.records import AdvisoryRecord, Direction, RepoId, Severity

if TYPE_CHECKING:
    from hubwatch.storage import Store

__all__ = ["Relation", "load_standing", "pin_headline", "relation", "relations", "whole_line_standing"]

# One piece of a relation: text, or a revision (a full sha; "" for none) the page links.
Piece = tuple[str, str]


def load_standing(store: "Store", repo: RepoId, sha: str, ignored: Iterable[str] = ()) -> Standing | None:
    """The standing of a pin at `sha` (full or a unique prefix), as every page shows it: `standing_at`
    (the events index on a linear history, what is kept per history version otherwise); None when the
    repo is not stored. A stored revision a force-push dropped is read along its own ancestors."""
    return standing_at(store, repo, sha, ignored)


def whole_line_standing(
    store: "Store", repo: RepoId, commit: str, stored: bool, ignored: frozenset[str] = frozenset()
) -> Standing | None:
    """`load_standing` from the repo's whole main line and every advisory, read again (any history
    shape; nothing kept): the reference the store's answer is tested against."""
    line = store.revisions.revision_shas(repo)
    if line is None:
        return None
    records = store.advisories.records(repo)
    own = store.revisions.revision_shas(repo, tip=commit) if stored and commit not in line else None
    if not own:
        return standing(line, records, commit, ignored)
    # Off the main line: read along its own, told the main line's revision to move to.
    head = standing(line, records, line[-1], ignored)
    target = head if head.suggested is None else standing(line, records, head.suggested, ignored)
    return off_the_main_line(standing(own, records, commit, ignored), target)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def pin_headline(result: Standing, subject: str = "a pin here", min_severity: Severity = Severity.INFO) -> str:
    """"a pin here lacks 2 updates (worst: high) and carries 1 hazard" (no "move to": pages link it)."""
    if not result.known:
        return f"{subject} is at a revision not in the stored history: nothing is known about it"
    lacks = _counted(result.lacks, result.ignored, min_severity)
    carries = _counted(result.carries, result.ignored, min_severity)
    parts = []
    if lacks:
        worst = _worst(lacks)
        parts.append(f"lacks {_plural(len(lacks), 'update')}" + (f" (worst: {worst.value})" if worst else ""))
    if carries:
        worst = _worst(carries)
        parts.append(f"carries {_plural(len(carries), 'hazard')}" + (f" (worst: {worst.value})" if worst else ""))
    text = f"{subject} " + (" and ".join(parts) if parts else "is up to date: it lacks no update and carries no hazard")
    if result.ignored:
        text += f" ({len(result.ignored)} acknowledged)"
    if not result.on_main_line:
        text += "; it is not on the main line any more (history rewritten upstream)"
    return text


def _counted(records: Sequence[AdvisoryRecord], ignored: Sequence[str], floor: Severity) -> list[AdvisoryRecord]:
    return [
        a for a in records
        if a.id not in ignored and ((s := advisory_severity(a)) is None or s.rank >= floor.rank)
    ]  # fmt: skip


def _worst(records: Sequence[AdvisoryRecord]) -> Severity | None:
    found = [s for a in records if (s := advisory_severity(a)) is not None]
    return max(found, key=lambda s: s.rank) if found else None


def _fixes(record: AdvisoryRecord) -> list[str]:
    return [e.value for e in git_events(record.osv) if e.event == "fixed"]


@dataclass(frozen=True)
class Relation:
    """One record as a page at `shown` lists it: its severity, how it relates, its own summary."""

    record: AdvisoryRecord
    severity: Severity | None
    pieces: tuple[Piece, ...]
    summary: str
    ignored: bool


def relation(record: AdvisoryRecord, shown: str, affects: bool) -> tuple[Piece, ...]:
    """How a record relates to revision `shown` (`affects`: whether it affects a pin there)."""
    at = record.revision_sha
    here = at == shown
    if advisory_direction(record) is Direction.UPDATE:
        if here:
            return (("update published in this revision: pins before it lack it", ""),)
        if affects:
            return (("update published at ", at), (": a pin here lacks it", ""))
        return (("update published at ", at), (": a pin here has it", ""))
    fixes = _fixes(record)
    if affects:
        if here:
            return (("hazard introduced in this revision", ""),)
        return (("hazard introduced at ", at), (", still carried", ""))
    if shown in fixes:
        return (("hazard introduced at ", at), (", removed in this revision", ""))
    if fixes:
        return (("hazard introduced at ", at), (", removed at ", fixes[0]))
    return (("hazard introduced at ", at), (": a pin here does not carry it", ""))


def relations(
    records: Iterable[AdvisoryRecord], shown: str, affecting: Iterable[str], ignored: Iterable[str] = ()
) -> list[Relation]:
    """The records as a page at `shown` lists them, most severe first."""
    hits, quiet = frozenset(affecting), frozenset(ignored)
    rows = []
    for record in records:
        summary = str(record.osv.get("summary") or "")
        prefix = f"{record.repo}: "
        summary = summary[len(prefix):] if summary.startswith(prefix) else summary
        summary = summary.removeprefix("fixed in this revision: ")  # records stored by earlier releases said so
        rows.append(
            Relation(record, advisory_severity(record), relation(record, shown, record.id in hits), summary,
                     record.id in quiet)  # fmt: skip
        )
    return sorted(rows, key=lambda r: (-(r.severity.rank if r.severity else -1), r.record.id))
