"""The values `hubwatch check` reports: an advisory on a pin, the revision to move to, one pin's report,
why a commit is unknown, and whether a pin fails the gate (`--fail-on`, `--strict`) and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from hubwatch.advisories.standing import TemplateDiff
from hubwatch.domain.records import RepoId, Severity
from hubwatch.pincheck.pins import Pin

__all__ = ["OFF_THE_MAIN_LINE", "AdvisoryHit", "Change", "Gate", "Lookup", "PinReport", "RepoFacts", "Suggestion",
           "gate", "hit_from_osv", "parse_severity", "unknown_commit_note", "worst_first"]


def parse_severity(value: object) -> Severity | None:
    try:
        return Severity(str(value))
    except ValueError:
        return None


@dataclass(frozen=True)
class AdvisoryHit:
    """One advisory affecting a pin, as the check reports it."""

    id: str
    severity: Severity | None  # None: the record carries no severity we understand (counts as failing)
    summary: str
    modified: str
    kinds: tuple[str, ...] = ()
    direction: str = ""  # hazard (the pin carries it) or update (the pin lacks it)
    ignored: bool = False  # acknowledged: listed, never failing
    # An open inherited advisory (docs/derivatives.md): what the base fixed, since this repo has not.
    upstream_fix: str = ""

    def at_least(self, threshold: Severity) -> bool:
        return self.severity is None or self.severity.rank >= threshold.rank

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "severity": self.severity.value if self.severity else None, "summary": self.summary,
                "modified": self.modified, "kinds": list(self.kinds), "direction": self.direction,
                "ignored": self.ignored, **({"upstream_fix": self.upstream_fix} if self.upstream_fix else {})}


@dataclass(frozen=True)
class Change:
    """An update on the way from a pin to the suggested revision."""

    id: str
    severity: Severity | None
    kinds: tuple[str, ...]
    summary: str
    revision: str  # the commit that made the change
    chat_template: tuple[TemplateDiff, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "severity": self.severity.value if self.severity else None, "kinds": list(self.kinds),
                "summary": self.summary, "revision": self.revision,
                "chat_template": [d.to_json() for d in self.chat_template]}


@dataclass(frozen=True)
class Suggestion:
    """The newest revision carrying no unacknowledged hazard, what moving there resolves, what changes."""

    commit: str
    resolves: tuple[str, ...]
    changes: tuple[Change, ...]  # most severe first

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "resolves": list(self.resolves), "changes": [c.to_json() for c in self.changes]}


# What a pin a force-push (or a squash) took off the main line is told, beside its move back onto it.
OFF_THE_MAIN_LINE = "not on the repo's main line any more (history rewritten)"


@dataclass(frozen=True)
class Lookup:
    """What a source knows of one (repo, revision): the full commit, or None when unknown."""

    commit: str | None
    hits: tuple[AdvisoryHit, ...] = ()
    note: str = ""  # why the commit is unknown, when it is
    suggestion: Suggestion | None = None
    on_main_line: bool = True  # False: a stored commit that a force-push or squash upstream dropped


@dataclass(frozen=True)
class RepoFacts:
    """What the store (or the server) holds of a repo whose pinned commit it does not know."""

    watched: bool
    revisions: int  # stored revisions
    last_polled_at: str | None  # RFC 3339; None: never polled


def unknown_commit_note(repo: RepoId, facts: RepoFacts | None) -> str:
    """Why a commit pin of `repo` is unknown, and what to do, from what is held of the repo (None:
    nothing): the same words from the local store and from a server."""
    if facts is None or not facts.watched:
        return (f"unknown: {repo} is not watched (watch the repo, then poll: `hubwatch watch add {repo}`, "
                f"then `hubwatch poll {repo}`)")
    if facts.revisions == 0:
        return f"unknown: {repo} is watched but no revision is stored yet (run `hubwatch poll {repo}`)"
    polled = f", last polled {facts.last_polled_at}" if facts.last_polled_at else ""
    return (f"unknown: not in the stored history of {repo} ({facts.revisions} revisions{polled}): mistyped, "
            f"from another repo, or a commit upstream never had on main or pushed after the last poll; "
            f"check the sha, or run `hubwatch poll {repo}`")


@dataclass(frozen=True)
class PinReport:
    pin: Pin
    status: str  # affected | clean | unknown | unpinned
    commit: str | None
    hits: tuple[AdvisoryHit, ...]
    note: str = ""
    suggestion: Suggestion | None = None
    on_main_line: bool | None = True  # None: no commit the store holds (unknown, unpinned)

    @property
    def moves(self) -> bool:
        """Whether `check --fix` rewrites this pin: it has a revision to move to and is affected, or
        its commit is off the repo's main line (the hub may no longer serve it) even when clean."""
        return self.suggestion is not None and (self.status == "affected" or
                                                (self.status == "clean" and not self.on_main_line))


def worst_first(hits: Sequence[AdvisoryHit]) -> list[AdvisoryHit]:
    """Most severe first (a record with no severity we understand first of all), then by id."""
    return sorted(hits, key=lambda h: (-(h.severity.rank if h.severity else 99), h.id))


@dataclass(frozen=True)
class Gate:
    """Whether one pin fails the check (`--fail-on`, `--strict`), and why, in words."""

    fails: bool
    reason: str

    def text(self) -> str:
        return f"FAILS: {self.reason}" if self.fails else f"passes the gate: {self.reason}"


def gate(report: PinReport, threshold: Severity, strict: bool = False) -> Gate:
    """The gate's verdict on one pin: an advisory not acknowledged at or above `threshold` fails it;
    with `strict`, so does an unknown pin and a commit dropped from the main line."""
    failing = worst_first([h for h in report.hits if h.at_least(threshold) and not h.ignored])
    if failing:
        top = failing[0]
        more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
        if top.severity is None:
            return Gate(True, f"{top.id}{more} has no severity hubwatch understands, which counts as failing")
        return Gate(True, f"{top.severity.value} {top.direction or 'advisory'} {top.id}{more} "
                          f"≥ --fail-on {threshold.value}")
    if strict and report.status == "unknown":
        return Gate(True, "unknown pin, and --strict fails unknown pins")
    if strict and report.commit is not None and report.on_main_line is False:
        return Gate(True, "on a commit dropped from the main line, and --strict fails those")
    open_hits = worst_first([h for h in report.hits if not h.ignored])
    if open_hits and open_hits[0].severity is not None:
        return Gate(False, f"{open_hits[0].severity.value} < {threshold.value}")
    if report.hits:
        return Gate(False, "every advisory on it is acknowledged")
    if report.status == "unknown":
        return Gate(False, "unknown pins fail only with --strict")
    if report.status == "unpinned":
        return Gate(False, "an unpinned use is a warning" + (", even with --strict" if strict else ""))
    if report.on_main_line is False:
        return Gate(False, "no advisory affects it; a commit dropped from the main line fails only with --strict")
    return Gate(False, "no advisory affects it")


def hit_from_osv(osv: Mapping[str, Any], direction: str = "", ignored: bool = False) -> AdvisoryHit:
    raw = osv.get("database_specific")
    ds: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    kinds = tuple(str(k) for k in ds.get("kinds", []) if isinstance(k, str))
    return AdvisoryHit(str(osv.get("id")), parse_severity(ds.get("max_severity")), str(osv.get("summary", "")),
                       str(osv.get("modified", "")), kinds, direction or str(ds.get("direction", "")), ignored,
                       _upstream_fix(ds))


def _upstream_fix(ds: Mapping[str, Any]) -> str:
    """For an inherited advisory not closed yet: "no fixed revision of this repo yet; the base fixed it at …"."""
    inherited = ds.get("inherited")
    if not isinstance(inherited, Mapping) or ds.get("fixed_by"):
        return ""
    base, commit, upstream = (str(inherited.get(k) or "?") for k in ("base", "base_commit", "upstream"))
    return f"no fixed revision of this repo yet; the base {base} fixed it at {commit[:12]} ({upstream})"
