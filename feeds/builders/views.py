"""What the pages and the JSON API show of stored history: estimate summaries and JSON shapes.

The stored estimate JSON belongs to the estimator and changes with its version, so it is read
tolerantly: every figure is optional and a missing or odd key shows as '—', never an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hubwatch.feeds.text import as_utc, rfc3339
from hubwatch.domain.records import ChangeRecord, RevisionRecord

__all__ = [
    "CardFit",
    "EstimateView",
    "HistoryEntryLike",
    "change_json",
    "estimate_view",
    "history_json",
    "revision_json",
]

_PARAM_PATHS = (("params", "derived"), ("params", "total"), ("parameters", "total"), ("total_params",),
                ("params",), ("parameters",))
_CHECKPOINT_PATHS = (("params", "checkpoint"), ("parameters", "checkpoint"))
# The estimator's method keys (memory_gb and `<key>_batch` in card rows), in display order.
_METHODS = (("full_finetune", "full fine-tune"), ("lora", "LoRA"), ("qlora", "QLoRA"), ("serve", "serve"),
            ("serve_weights", "serve weights"), ("kv_cache", "KV cache"))
_LABELS = dict(_METHODS)


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
class CardFit:
    name: str
    memory_gb: float | None
    batches: tuple[tuple[str, int | None], ...]  # (method label, largest batch; 0 = does not fit)


@dataclass(frozen=True)
class EstimateView:
    params: int | None
    checkpoint_params: int | None
    memory: tuple[tuple[str, int], ...]  # (method label, bytes)
    cards: tuple[CardFit, ...] = ()
    settings: str | None = None
    error: str | None = None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _lookup(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    current: Any = data
    for key in path:
        if not isinstance(current, Mapping) or key not in current:
            return None
        current = current[key]
    return current


def _first_int(data: Mapping[str, Any], paths: tuple[tuple[str, ...], ...]) -> int | None:
    for path in paths:
        found = _number(_lookup(data, path))
        if found is not None:
            return int(found)
    return None


def _memory(data: Mapping[str, Any]) -> list[tuple[str, int]]:
    """Peak memory per method in bytes: the estimator's `memory_gb` (decimal GB) or a `memory`
    mapping of method → bytes."""
    gb = data.get("memory_gb")
    if isinstance(gb, Mapping):
        return [(_LABELS.get(str(k), str(k)), int(v * 1e9)) for k, raw in gb.items() if (v := _number(raw)) is not None]
    raw_bytes = data.get("memory")
    if isinstance(raw_bytes, Mapping):
        return [(_LABELS.get(str(k), str(k)), int(v)) for k, raw in raw_bytes.items() if (v := _number(raw)) is not None]
    return []


def _cards(data: Mapping[str, Any]) -> list[CardFit]:
    rows = data.get("cards")
    if not isinstance(rows, list):
        return []
    fits = []
    for row in rows:
        if not isinstance(row, Mapping) or not isinstance(row.get("name"), str):
            continue
        batches = tuple(
            (label, None if (n := _number(row.get(f"{key}_batch"))) is None else int(n))
            for key, label in _METHODS
            if f"{key}_batch" in row
        )
        fits.append(CardFit(row["name"], _number(row.get("memory_gb")), batches))
    return fits


def _settings_line(data: Mapping[str, Any]) -> str | None:
    settings = data.get("settings")
    if not isinstance(settings, Mapping):
        return None
    parts = [f"{k} {settings[k]}" for k in ("method", "seq_len", "batch", "lora_rank", "precision", "optimizer")
             if isinstance(settings.get(k), (str, int, float))]
    return ", ".join(parts) or None


def estimate_view(estimate: Mapping[str, Any] | None) -> EstimateView | None:
    """The headline figures of a stored estimate (None when the revision has none)."""
    if not isinstance(estimate, Mapping):
        return None
    error = estimate.get("error")
    return EstimateView(
        params=_first_int(estimate, _PARAM_PATHS),
        checkpoint_params=_first_int(estimate, _CHECKPOINT_PATHS),
        memory=tuple(_memory(estimate)),
        cards=tuple(_cards(estimate)),
        settings=_settings_line(estimate),
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
