"""`hubwatch check`: which advisories affect each pin, and where to move it, from the local store or a server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Protocol, Sequence

from hubwatch.advisories.pin_standing import standing_at
from hubwatch.advisories.standing import Standing, advisory_direction, advisory_severity, template_diffs
from hubwatch.domain.records import AdvisoryRecord, RepoId, Severity
from hubwatch.pincheck.errors import ServerError, ServerUnreachable
from hubwatch.pincheck.pins import Pin
from hubwatch.pincheck.report import (
    OFF_THE_MAIN_LINE, AdvisoryHit, Change, Lookup, PinReport, RepoFacts, Suggestion, gate, hit_from_osv,
    unknown_commit_note,
)
from hubwatch.pincheck.server import ServerSource

if TYPE_CHECKING:
    from hubwatch.storage import Store

__all__ = [
    "AdvisoryHit",
    "AdvisorySource",
    "Lookup",
    "PinReport",
    "ServerError",
    "ServerSource",
    "ServerUnreachable",
    "StoreSource",
    "Suggestion",
    "check_pins",
    "fails",
    "gate",
    "hit_from_osv",
    "lookup_from_standing",
]


class AdvisorySource(Protocol):
    def lookup(self, queries: Sequence[tuple[RepoId, str]], ignored: frozenset[str] = frozenset()) -> list[Lookup]:
        """For each (repo, commit or prefix ≥7 hex), what is known, in input order; `ignored`: acknowledged ids."""
        ...


def _hit(record: AdvisoryRecord, ignored: frozenset[str]) -> AdvisoryHit:
    return hit_from_osv({**record.osv, "id": record.id}, advisory_direction(record).value, record.id in ignored)


def lookup_from_standing(found: Standing, ignored: frozenset[str]) -> Lookup:
    """A known pin's answer from its standing: every advisory on it, and the revision to move to."""
    hits = tuple(sorted((_hit(r, ignored) for r in (*found.lacks, *found.carries)), key=lambda h: h.id))
    suggestion = None
    if found.suggested:
        changes = tuple(
            Change(r.id, advisory_severity(r), _hit(r, ignored).kinds, str(r.osv.get("summary", "")),
                   r.revision_sha, template_diffs(r))
            for r in found.on_the_way
        )
        suggestion = Suggestion(found.suggested, found.resolves, changes)
    return Lookup(found.commit, hits, suggestion=suggestion, note="" if found.on_main_line else OFF_THE_MAIN_LINE,
                  on_main_line=found.on_main_line)


class StoreSource:
    """Answers from the local store: each pin's standing on the repo's main line (`standing_at`,
    through the events index on a long history, so a check costs the same at any depth)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def lookup(self, queries: Sequence[tuple[RepoId, str]], ignored: frozenset[str] = frozenset()) -> list[Lookup]:
        from hubwatch.storage.errors import AmbiguousRevision

        out = []
        for repo, revision in queries:
            try:
                found = standing_at(self._store, repo, revision, ignored)
            except AmbiguousRevision as exc:
                out.append(Lookup(None, note=f"{exc}; give more hex digits"))
                continue
            if found is not None and found.known:
                out.append(lookup_from_standing(found, ignored))
            else:
                out.append(Lookup(None, note=unknown_commit_note(repo, self._facts(repo))))
        return out

    def _facts(self, repo: RepoId) -> RepoFacts | None:
        from hubwatch.domain.times import rfc3339

        state = self._store.repo_state(repo)
        if state is None:
            return None
        polled = rfc3339(state.last_polled_at) if state.last_polled_at else None
        return RepoFacts(state.watched, state.revision_count, polled)


def check_pins(pins: Iterable[Pin], source: AdvisorySource, ignored: frozenset[str] = frozenset()) -> list[PinReport]:
    """A report per pin; only commit pins are looked up (one batch), the rest are warnings."""
    pins = list(pins)
    wanted = sorted({(p.repo, p.revision.lower()) for p in pins
                     if p.kind == "commit" and p.revision})
    answers = dict(zip(wanted, source.lookup(wanted, ignored))) if wanted else {}
    reports = []
    for pin in pins:
        if pin.kind == "commit" and pin.revision:  # a dataset pin's repo is the dataset's id: never the model's
            answer = answers[(pin.repo, pin.revision.lower())]
            if answer.commit is None:
                why = answer.note or unknown_commit_note(pin.repo, None)
                reports.append(PinReport(pin, "unknown", None, (), why, on_main_line=None))
            else:
                status = "affected" if answer.hits else "clean"
                reports.append(PinReport(pin, status, answer.commit, answer.hits, answer.note, answer.suggestion,
                                         answer.on_main_line))
        elif pin.kind == "dynamic":
            reports.append(PinReport(pin, "unknown", None, (), "revision is computed at run time", on_main_line=None))
        elif pin.kind == "ref":
            reports.append(PinReport(pin, "unpinned", None, (), f"{pin.revision!r} is a branch or tag: it moves",
                                     on_main_line=None))
        else:
            reports.append(PinReport(pin, "unpinned", None, (), "no revision: whatever main is at run time",
                                     on_main_line=None))
    return reports


def fails(reports: Iterable[PinReport], threshold: Severity, strict: bool = False) -> bool:
    """True when an advisory not acknowledged, at or above `threshold`, affects a pin; with `strict`,
    also when a pin is unknown (never seen, ambiguous, or computed at run time) or on a commit a
    force-push or squash upstream dropped from the main line (the hub may stop serving it)."""
    return any(gate(report, threshold, strict).fails for report in reports)
