"""Where a pinned revision stands: the updates it lacks, the hazards it carries, the revision to move to.

Pure: the repo's main line (oldest → newest) and its advisories in, one `Standing` out. The OSV
GIT-range semantics are those of `hubwatch.domain.gitrange` (the same as `/v1/query`); withdrawn
records never count.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hubwatch.advisories.advise_match import direction_of
from hubwatch.advisories.gitrange import affected_mask
from hubwatch.domain.gitrange import GitEvent, git_events
from hubwatch.domain.records import AdvisoryRecord, Direction, Severity

__all__ = ["LineFacts", "Standing", "TemplateDiff", "advisory_direction", "advisory_severity", "line_facts",
           "off_the_main_line", "standing", "standing_of", "standing_on", "template_diffs"]


@dataclass(frozen=True)
class TemplateDiff:
    """One conversation's rendered prompt before and after a chat-template change."""

    path: str
    template: str
    conversation: str
    old: str  # "ok" or how rendering failed
    new: str
    diff: str  # unified diff of the rendered prompts ("" when one side failed)

    def to_json(self) -> dict[str, str]:
        return {
            "path": self.path,
            "template": self.template,
            "conversation": self.conversation,
            "old": self.old,
            "new": self.new,
            "diff": self.diff,
        }


@dataclass(frozen=True)
class Standing:
    commit: str  # the pin, 40-hex
    known: bool  # False: the repo's stored history does not hold this commit
    lacks: tuple[AdvisoryRecord, ...]  # updates a pin here lacks, most severe first
    carries: tuple[AdvisoryRecord, ...]  # hazards open at this revision, most severe first
    ignored: tuple[str, ...]  # ids among lacks/carries that were acknowledged
    suggested: str | None  # newest revision carrying no unacknowledged hazard (None: none better / unknown / unaffected)
    resolves: tuple[str, ...]  # ids affecting the pin that do not affect `suggested`
    on_the_way: tuple[AdvisoryRecord, ...]  # updates between the pin and `suggested`, most severe first
    newest: str | None = field(default=None)  # the newest stored revision (None: no history)
    # False: a stored revision a force-push (or a squash) took off the main line: its advisories are
    # read along its own line, and `suggested` is the main line's revision to move back onto
    on_main_line: bool = field(default=True)

    @property
    def worst_lack(self) -> Severity | None:
        """The highest severity among the updates lacked (None when none is lacked)."""
        return _worst(self.lacks)

    @property
    def worst_carried(self) -> Severity | None:
        return _worst(self.carries)

    def open_hazards(self) -> tuple[AdvisoryRecord, ...]:
        """The hazards carried that were not acknowledged."""
        return tuple(a for a in self.carries if a.id not in self.ignored)

    def to_json(self) -> dict[str, Any]:
        ignored = frozenset(self.ignored)
        return {
            "commit": self.commit,
            "known": self.known,
            "on_main_line": self.on_main_line,
            "newest": self.newest,
            "lacks": [_advisory_json(a, ignored) for a in self.lacks],
            "carries": [_advisory_json(a, ignored) for a in self.carries],
            "ignored": list(self.ignored),
            "suggested": self.suggested,
            "resolves": list(self.resolves),
            "on_the_way": [
                {**_advisory_json(a, ignored), "chat_template": [d.to_json() for d in template_diffs(a)]}
                for a in self.on_the_way
            ],
        }


@dataclass(frozen=True)
class LineFacts:
    """What `standing` derives from a main line and its advisories before it looks at a pin: made
    once, it answers every pin of that line (`standing_on`) without placing the events again."""

    shas: tuple[str, ...]  # the line, oldest → newest, lowercased
    at: Mapping[str, int]  # each sha's last index on the line
    live: tuple[AdvisoryRecord, ...]  # the advisories not withdrawn
    along: Mapping[str, int]  # per live record: the pins along the line it affects (bit i: shas[i])
    direction: Mapping[str, Direction]  # per live record: update or hazard


def line_facts(revisions: Sequence[str], advisories: Sequence[AdvisoryRecord]) -> LineFacts:
    """The facts of the line `revisions` (oldest → newest) under `advisories`."""
    shas = tuple(s.lower() for s in revisions)
    at = {sha: i for i, sha in enumerate(shas)}  # the last index of each
    live = tuple(a for a in advisories if a.withdrawn is None)
    first: dict[str, int] = {}
    for i, sha in enumerate(shas):
        first.setdefault(sha, i)
    along = {a.id: _affected(a, first, len(shas)) for a in live}
    return LineFacts(shas, at, live, along, {a.id: advisory_direction(a) for a in live})


def standing(
    revisions: Sequence[str],
    advisories: Sequence[AdvisoryRecord],
    commit: str,
    ignored: frozenset[str] = frozenset(),
) -> Standing:
    """The standing of a pin at `commit` (a full sha) along `revisions` (oldest → newest)."""
    return standing_on(line_facts(revisions, advisories), commit, ignored)


def standing_on(facts: LineFacts, commit: str, ignored: frozenset[str] = frozenset()) -> Standing:
    """`standing` of a pin at `commit` on the line `facts` were made from."""
    pin = commit.strip().lower()
    shas = facts.shas
    newest = shas[-1] if shas else None
    at = facts.at.get(pin)
    if at is None:
        return Standing(pin, False, (), (), (), None, (), (), newest)
    live, along, direction = facts.live, facts.along, facts.direction
    here = [a for a in live if along[a.id] >> at & 1]
    lacks = _ordered(a for a in here if direction[a.id] is Direction.UPDATE)
    carries = _ordered(a for a in here if direction[a.id] is Direction.HAZARD)
    acknowledged = tuple(sorted(a.id for a in here if a.id in ignored))
    open_at = 0
    for a in live:
        if direction[a.id] is Direction.HAZARD and a.id not in ignored:
            open_at |= along[a.id]
    clean = ~open_at & ((1 << len(shas)) - 1)
    target = clean.bit_length() - 1 if clean else None
    if target is None or target == at or not here:  # nothing better, or nothing to move for
        return Standing(pin, True, lacks, carries, acknowledged, None, (), (), newest)
    resolves = tuple(sorted(a.id for a in here if not along[a.id] >> target & 1))
    on_the_way = tuple(a for a in lacks if a.id in resolves)
    return Standing(pin, True, lacks, carries, acknowledged, shas[target], resolves, on_the_way, newest)


def standing_of(
    commit: str,
    *,
    known: bool,
    newest: str | None,
    here: Sequence[AdvisoryRecord],
    clean: str | None,
    held_at_clean: frozenset[str],
    ignored: frozenset[str] = frozenset(),
) -> Standing:
    """`standing` from what it reads off the line, found elsewhere (the store's events index):
    the live advisories holding the pin (`here`), the newest revision of the line no unacknowledged
    hazard holds (`clean`; None: none) and which of `here` hold it too. The same Standing."""
    pin = commit.strip().lower()
    if not known:
        return Standing(pin, False, (), (), (), None, (), (), newest)
    live = [a for a in here if a.withdrawn is None]
    direction = {a.id: advisory_direction(a) for a in live}
    lacks = _ordered(a for a in live if direction[a.id] is Direction.UPDATE)
    carries = _ordered(a for a in live if direction[a.id] is Direction.HAZARD)
    acknowledged = tuple(sorted(a.id for a in live if a.id in ignored))
    if clean is None or clean == pin or not live:
        return Standing(pin, True, lacks, carries, acknowledged, None, (), (), newest)
    resolves = tuple(sorted(a.id for a in live if a.id not in held_at_clean))
    on_the_way = tuple(a for a in lacks if a.id in resolves)
    return Standing(pin, True, lacks, carries, acknowledged, clean, resolves, on_the_way, newest)


def off_the_main_line(own: Standing, target: Standing) -> Standing:
    """The standing of a pin a force-push took off the main line: `own` (its advisories along its own
    line) with the move back onto the main line, to `target`'s commit (the main line's standing of
    the revision to move to). The pin itself may be gone upstream, so the move is suggested even when
    nothing affects it; it resolves what affects the pin and not the target, and has no way between."""
    held_there = {a.id for a in (*target.lacks, *target.carries)}
    resolves = tuple(sorted(a.id for a in (*own.lacks, *own.carries) if a.id not in held_there))
    return replace(own, suggested=target.commit, resolves=resolves, on_the_way=(), on_main_line=False)


def advisory_direction(record: AdvisoryRecord) -> Direction:
    """The record's declared meaning; for a record of another shape, read from its events
    (`introduced: "0"` only: an update; any introducing commit: a hazard)."""
    declared = direction_of(record.osv)
    if declared is not None:
        return declared
    events = git_events(record.osv)
    if events and all(e.value == "0" for e in events if e.event == "introduced"):
        return Direction.UPDATE
    return Direction.HAZARD


def advisory_severity(record: AdvisoryRecord) -> Severity | None:
    """The hubwatch severity in a record's `database_specific` (its own, or its worst change's)."""
    specific = record.osv.get("database_specific")
    if not isinstance(specific, Mapping):
        return None
    candidates: list[Any] = [specific.get("max_severity"), specific.get("severity")]
    changes = specific.get("changes")
    if isinstance(changes, list):
        candidates += [c.get("severity") for c in changes if isinstance(c, Mapping)]
    found = [Severity(c) for c in candidates if isinstance(c, str) and c in Severity._value2member_map_]
    return max(found, key=lambda s: s.rank) if found else None


def template_diffs(record: AdvisoryRecord) -> tuple[TemplateDiff, ...]:
    """The rendered chat-template diffs a record's changes hold (`detail.rendered_diff`)."""
    specific = record.osv.get("database_specific")
    changes = specific.get("changes") if isinstance(specific, Mapping) else None
    out: list[TemplateDiff] = []
    for change in changes if isinstance(changes, list) else []:
        detail = change.get("detail") if isinstance(change, Mapping) else None
        rendered = detail.get("rendered_diff") if isinstance(detail, Mapping) else None
        if not isinstance(detail, Mapping) or not isinstance(rendered, Mapping):
            continue
        for name, entry in rendered.items():
            if isinstance(entry, Mapping):
                out.append(
                    TemplateDiff(
                        str(change.get("path", "")),
                        str(detail.get("template", "default")),
                        str(name),
                        str(entry.get("old", "")),
                        str(entry.get("new", "")),
                        str(entry.get("diff", "") or ""),
                    )
                )
    return tuple(out)


def _affected(record: AdvisoryRecord, first: Mapping[str, int], n: int) -> int:
    """The pins along the line the record affects, as a bit set (bit i: the pin at index i)."""
    ranges: dict[int, list[GitEvent]] = defaultdict(list)
    for event in git_events(record.osv):
        ranges[event.range_index].append(event)
    out = 0
    for events in ranges.values():
        out |= affected_mask(events, first, n)
    return out


def _rank(record: AdvisoryRecord) -> int:
    severity = advisory_severity(record)
    return severity.rank if severity is not None else -1


def _ordered(records: Iterable[AdvisoryRecord]) -> tuple[AdvisoryRecord, ...]:
    return tuple(sorted(records, key=lambda a: (-_rank(a), a.id)))


def _worst(records: Sequence[AdvisoryRecord]) -> Severity | None:
    found = [s for a in records if (s := advisory_severity(a)) is not None]
    return max(found, key=lambda s: s.rank) if found else None


def _advisory_json(record: AdvisoryRecord, ignored: frozenset[str]) -> dict[str, Any]:
    specific = record.osv.get("database_specific")
    kinds = specific.get("kinds") if isinstance(specific, Mapping) else None
    severity = advisory_severity(record)
    return {
        "id": record.id,
        "severity": severity.value if severity is not None else None,
        "kinds": [k for k in kinds if isinstance(k, str)] if isinstance(kinds, list) else [],
        "summary": str(record.osv.get("summary", "")),
        "direction": advisory_direction(record).value,
        "ignored": record.id in ignored,
        "revision": record.revision_sha,
    }
