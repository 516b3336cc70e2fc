"""What the pages and the JSON API show of stored history: estimate summaries and JSON shapes.

The stored estimate JSON belongs to the estimator and changes with its version, so it is read
tolerantly: every figure is optional and a missing or odd key shows as '—', never an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hubwatch.feeds.text import as_utc, rfc3339
from hubwatch.storage.records import ChangeRecord, RevisionRecord

__all__ = [
    "EstimateView",
    "HistoryEntryLike",
    "change_json",
    "estimate_view",
    "history_json",
    "revision_json",
]

_PARAM_PATHS = (
    ("params", "total"),
    ("parameters", "total"),
    ("params", "derived"),
    ("parameters", "derived"),
    ("total_params",),
    ("params",),
    ("parameters",),
)
_CHECKPOINT_PATHS = (("params", "checkpoint"), ("parameters", "checkpoint"), ("checkpoint_params",))
_TOTAL_KEYS = ("total_bytes", "total", "bytes", "peak_bytes")
_BATCH_KEYS = ("batch_per_card", "max_batch_per_card", "largest_batch", "max_batch")


class HistoryEntryLike(Protocol):
    """What the builders read of the store's HistoryEntry."""

    @property
    def revision(self) -> RevisionRecord: ...
    @property
    def position(self) -> int: ...
    @property
    def changes(self) -> Sequence[ChangeRecord]: ...
    @property
    def estimate(self) -> dict[str, Any] | None: ...
    @property
    def estimator_version(self) -> str | None: ...
    @property
    def advisory_ids(self) -> Sequence[str]: ...


@dataclass(frozen=True)
class EstimateView:
    params: int | None
    checkpoint_params: int | None
    memory: tuple[tuple[str, int], ...]  # (method, bytes)
    batch: tuple[tuple[str, int], ...]  # (card or method, largest batch)
    error: str | None = None


def _number(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def _lookup(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    current: Any = data
    for key in path:
        if not isinstance(current, Mapping) or key not in current:
            return None
        current = current[key]
    return current


def _first_number(data: Mapping[str, Any], paths: tuple[tuple[str, ...], ...]) -> int | None:
    for path in paths:
        found = _number(_lookup(data, path))
        if found is not None:
            return found
    return None


def _total(value: Any) -> int | None:
    if isinstance(value, Mapping):
        for key in _TOTAL_KEYS:
            found = _number(value.get(key))
            if found is not None:
                return found
        return None
    return _number(value)


def _memory(data: Mapping[str, Any]) -> list[tuple[str, int]]:
    raw = data.get("memory")
    pairs: list[tuple[str, Any]] = []
    if isinstance(raw, Mapping):
        pairs = [(str(k), v) for k, v in raw.items()]
    elif isinstance(raw, list):
        pairs = [(str(m.get("method", "?")), m) for m in raw if isinstance(m, Mapping)]
    return [(name, total) for name, value in pairs if (total := _total(value)) is not None]


def _batch(data: Mapping[str, Any]) -> list[tuple[str, int]]:
    for key in _BATCH_KEYS:
        raw = data.get(key)
        if isinstance(raw, Mapping):
            return [(str(k), n) for k, v in raw.items() if (n := _number(v)) is not None]
        if (n := _number(raw)) is not None:
            return [("per card", n)]
    found: list[tuple[str, int]] = []
    memory = data.get("memory")
    if isinstance(memory, Mapping):
        for method, value in memory.items():
            if isinstance(value, Mapping):
                for key in _BATCH_KEYS:
                    if (n := _number(value.get(key))) is not None:
                        found.append((str(method), n))
                        break
    return found


def estimate_view(estimate: Mapping[str, Any] | None) -> EstimateView | None:
    """The headline figures of a stored estimate (None when the revision has none)."""
    if not isinstance(estimate, Mapping):
        return None
    error = estimate.get("error")
    return EstimateView(
        params=_first_number(estimate, _PARAM_PATHS),
        checkpoint_params=_first_number(estimate, _CHECKPOINT_PATHS),
        memory=tuple(_memory(estimate)),
        batch=tuple(_batch(estimate)),
        error=str(error) if error is not None else None,
    )


def change_json(change: ChangeRecord, detail: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": change.kind.value,
        "severity": change.severity.value,
        "path": change.path,
        "summary": change.summary,
        "direction": change.direction,
    }
    if detail:
        body["detail"] = change.detail
    return body


def history_json(entries: Sequence[HistoryEntryLike]) -> list[dict[str, Any]]:
    """The history exactly as `hubwatch history --json` prints it: revisions oldest first."""
    return [
        {
            "sha": e.revision.sha,
            "parent": e.revision.parent,
            "date": as_utc(e.revision.date).isoformat(),
            "title": e.revision.title,
            "changes": [change_json(c) for c in e.changes],
            "advisories": list(e.advisory_ids),
        }
        for e in sorted(entries, key=lambda e: e.position)
    ]


def revision_json(repo: str, entry: HistoryEntryLike) -> dict[str, Any]:
    """Everything stored about one revision (changes with detail, estimate, advisories)."""
    revision = entry.revision
    return {
        "repo": repo,
        "sha": revision.sha,
        "parent": revision.parent,
        "position": entry.position,
        "date": rfc3339(revision.date),
        "title": revision.title,
        "message": revision.message,
        "authors": list(revision.authors),
        "changes": [change_json(c, detail=True) for c in entry.changes],
        "estimate": entry.estimate,
        "estimator_version": entry.estimator_version,
        "advisories": list(entry.advisory_ids),
    }
