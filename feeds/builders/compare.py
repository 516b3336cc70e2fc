"""Comparing any two stored revisions of a repo (the compare page and its JSON twin), pure.

The range is GitHub's URL shape, `BASE...HEAD` (`BASE..HEAD` is read the same: a hubwatch history
is a line, so both mean "from BASE to HEAD"). The two snapshots are rebuilt from the store's files
and run through the diff engine exactly as `hubwatch diff` does (`diff_repo_snapshots(repo_type, base, head)`:
every file's semantic diff, chat templates rendered in the sandbox); the estimate deltas come from
the two stored estimates, and the advisories resolved and introduced from the standing of a pin at
BASE and at HEAD.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hubwatch.advisories.standing import Standing
from hubwatch.diff.templates import template_sources
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, FileRecord, Kind, RepoId
from hubwatch.domain.snapshot import Snapshot
from hubwatch.feeds.builders.views import EstimateView, HistoryEntryLike, change_json
from hubwatch.feeds.text import rfc3339

__all__ = [
    "BadRange",
    "DiffCache",
    "DiffResult",
    "CompareRange",
    "Comparison",
    "EstimateDelta",
    "Rows",
    "advisory_moves",
    "comparison_json",
    "estimate_deltas",
    "parse_range",
    "stored_snapshot",
    "template_texts",
]

_REF = re.compile(r"[0-9a-fA-F]{7,40}")


class BadRange(ValueError):
    """The compare URL's range is not `BASE...HEAD` with two commit shas or prefixes."""


@dataclass(frozen=True)
class CompareRange:
    base: str
    head: str


def parse_range(spec: str) -> CompareRange:
    """`abc1234...def5678` (or `abc1234..def5678`) → the two refs, lowercased; BadRange naming the fault."""
    for separator in ("...", ".."):
        base, found, head = spec.partition(separator)
        if found:
            break
    else:
        raise BadRange(f"{spec!r} is not a range: give BASE...HEAD, two commit shas (or unique prefixes "
                       "of 7+ hex characters) joined by '...'")
    for side, ref in (("base", base), ("head", head)):
        if not _REF.fullmatch(ref):
            raise BadRange(f"the {side} of {spec!r} is {ref!r}, not a commit sha: give 7 to 40 hex characters")
    return CompareRange(base.lower(), head.lower())


def stored_snapshot(sha: str, files: Sequence[FileRecord], contents: Mapping[str, bytes]) -> Snapshot:
    """A revision's Snapshot from `store.revisions.snapshot_files` (a safetensors header is stored as the JSON
    content of its `*.safetensors` path, as the tracker's pipeline writes it)."""
    tracked: dict[str, bytes] = {}
    headers: dict[str, Mapping[str, Any]] = {}
    for path, raw in contents.items():
        if path.endswith(".safetensors"):
            try:
                header = json.loads(raw)
            except ValueError:
                header = None
            headers[path] = header if isinstance(header, dict) else {}
        else:
            tracked[path] = raw
    return Snapshot(sha=sha, files={f.path: f for f in files}, contents=tracked, safetensors=headers)


def template_texts(change: ChangeRecord, old: Snapshot | None, new: Snapshot | None) -> tuple[str | None, str | None]:
    """The full old and new chat template a chat_template change is about (None for a side that
    has none), read from the two snapshots: the stored detail keeps long values only as a digest."""
    if change.kind is not Kind.CHAT_TEMPLATE or not isinstance(change.detail, Mapping):
        return None, None
    file, name = change.detail.get("file"), change.detail.get("template") or "default"
    old_file = change.detail.get("old_file") or file

    def find(snapshot: Snapshot | None, path: Any) -> str | None:
        if snapshot is None:
            return None
        return next((s.text for s in template_sources(snapshot) if s.file == path and s.name == name), None)

    return find(old, old_file), find(new, file)


Rows = tuple[tuple[ChangeRecord, str | None, str | None], ...]  # (change, old template, new template)


@dataclass(frozen=True)
class DiffResult:
    """The diff of a pair of stored revisions: its rows, and their HTML as the page shows them."""

    rows: Rows
    html: str


class DiffCache:
    """The diffs of recent (repo, BASE sha, HEAD sha) pairs, least recently used dropped first.

    A stored revision's snapshot never changes (its files are content-addressed and a sha names
    one commit), so the diff engine's result for a pair of full shas is kept as it is; the estimates
    and the advisories, which can change, are read afresh on every request."""

    def __init__(self, max_entries: int = 64) -> None:
        self._max = max_entries
        self._entries: OrderedDict[tuple[str, str, str], DiffResult] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, str], compute: Callable[[], DiffResult]) -> DiffResult:
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        rows = compute()  # outside the lock: two first requests may both compute, never block others
        with self._lock:
            self._entries[key] = rows
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
        return rows


@dataclass(frozen=True)
class EstimateDelta:
    """One estimate figure at BASE and at HEAD (`unit`: "params" or "bytes"; None: not estimated)."""

    label: str
    unit: str
    old: int | None
    new: int | None

    @property
    def change(self) -> str:
        if self.old is None or self.new is None:
            return ""
        if self.old == self.new:
            return "unchanged"
        if self.old == 0:
            return "new"
        return f"{(self.new - self.old) / self.old * 100:+.1f}%"


def estimate_deltas(old: EstimateView | None, new: EstimateView | None) -> list[EstimateDelta]:
    """Parameters (derived and checkpoint) and memory per method, old → new; empty when neither
    revision has an estimate."""
    if (old is None or old.error) and (new is None or new.error):
        return []
    rows = [
        EstimateDelta("parameters", "params", old.params if old else None, new.params if new else None),
        EstimateDelta("checkpoint parameters", "params", old.checkpoint_params if old else None,
                      new.checkpoint_params if new else None),
    ]
    old_memory, new_memory = dict(old.memory if old else ()), dict(new.memory if new else ())
    for method in dict.fromkeys([*old_memory, *new_memory]):
        rows.append(EstimateDelta(f"memory · {method}", "bytes", old_memory.get(method), new_memory.get(method)))
    return [r for r in rows if r.old is not None or r.new is not None]


def _affecting(result: Standing) -> dict[str, AdvisoryRecord]:
    return {a.id: a for a in (*result.lacks, *result.carries)}


def advisory_moves(base: Standing, head: Standing) -> tuple[list[AdvisoryRecord], list[AdvisoryRecord]]:
    """(resolved, introduced) moving a pin from BASE to HEAD: the live records that affect a pin at
    BASE (an update it lacks, a hazard it carries) and not one at HEAD, and the other way round."""
    at_base, at_head = _affecting(base), _affecting(head)
    resolved = [a for i, a in at_base.items() if i not in at_head]
    introduced = [a for i, a in at_head.items() if i not in at_base]
    return resolved, introduced


@dataclass(frozen=True)
class Comparison:
    repo: RepoId
    base: HistoryEntryLike
    head: HistoryEntryLike
    changes: tuple[ChangeRecord, ...]
    deltas: tuple[EstimateDelta, ...]
    resolved: tuple[AdvisoryRecord, ...]
    introduced: tuple[AdvisoryRecord, ...]
    # Revisions from BASE to HEAD along the repo's main line (negative: HEAD is older); None when a
    # side is off it (a force-push or squash upstream dropped it): the two are not on one line.
    steps: int | None = 0
    off_main_line: tuple[str, ...] = ()  # "BASE", "HEAD": the sides a rewrite dropped from the main line


def _side(entry: HistoryEntryLike) -> dict[str, Any]:
    revision = entry.revision
    return {"sha": revision.sha, "position": entry.position, "date": rfc3339(revision.date), "title": revision.title}


def comparison_json(comparison: Comparison) -> dict[str, Any]:
    """The compare page as JSON: both ends, every change with its detail, the estimate deltas and
    the advisory ids resolved and introduced."""
    return {
        "repo": str(comparison.repo),
        "base": _side(comparison.base),
        "head": _side(comparison.head),
        "revisions_between": comparison.steps,
        "on_main_line": {"base": "BASE" not in comparison.off_main_line, "head": "HEAD" not in comparison.off_main_line},
        "changes": [change_json(c, detail=True) for c in comparison.changes],
        "estimate": [{"figure": d.label, "unit": d.unit, "old": d.old, "new": d.new} for d in comparison.deltas],
        "advisories": {
            "resolved": [a.id for a in comparison.resolved],
            "introduced": [a.id for a in comparison.introduced],
        },
    }
