"""What the pages and the JSON API show of stored history: estimate summaries and JSON shapes.

The stored estimate JSON belongs to the estimator: it is parsed once, by `Estimate.from_json`
(tolerant of older versions: a missing or odd figure reads as None and shows as '—', never an
error), and the views read the typed Estimate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hubwatch.feeds.text import as_utc, rfc3339
from hubwatch.domain.records import ChangeRecord, RevisionRecord
from hubwatch.estimator.estimate import Estimate
from hubwatch.estimator.estimate_parts import Params, PeakMemory
from hubwatch.estimator.verdict import SupportWords, Verdict, batch_one_misfits, estimate_verdicts, support_words

__all__ = [
    "CardFit",
    "EstimateView",
    "HistoryEntryLike",
    "change_json",
    "chart_view",
    "estimate_view",
    "history_json",
    "revision_json",
    "stored_estimate",
]

# Labels of the estimate's headline memory figures and of its card-fit methods, in display order.
_PEAK_LABELS = {"full_finetune": "full fine-tune", "lora": "LoRA", "qlora": "QLoRA", "serve_weights": "serve weights",
                "kv_cache": "KV cache"}
_METHOD_LABELS = {"full": "full fine-tune", "lora": "LoRA", "qlora": "QLoRA", "serve": "serve"}


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
    breaks: tuple[tuple[str, str], ...] = ()  # (method label, the term that breaks batch 1), when known
    budget_gb: float | None = None  # the peak the card allows, shown when a cell names a term


@dataclass(frozen=True)
class EstimateView:
    params: int | None
    checkpoint_params: int | None
    memory: tuple[tuple[str, int], ...]  # (method label, bytes)
    cards: tuple[CardFit, ...] = ()
    settings: str | None = None
    error: str | None = None
    support: SupportWords | None = None  # params.support in words (None: stored before support levels)
    misfits: tuple[Verdict, ...] = ()  # the stored settings' method on each card it does not fit, and why


def stored_estimate(entry: HistoryEntryLike) -> Estimate | None:
    """The entry's stored estimate JSON, parsed once (tolerantly) into the estimator's Estimate."""
    return Estimate.from_json(entry.estimate)


def _settings_line(estimate: Estimate) -> str | None:
    settings = estimate.memory.settings if estimate.memory else None
    if settings is None:
        return None
    parts = [f"{k} {getattr(settings, k)}" for k in ("method", "seq_len", "batch", "lora_rank", "precision", "optimizer")
             if getattr(settings, k) is not None]
    return ", ".join(parts) or None


def _cards(estimate: Estimate) -> tuple[CardFit, ...]:
    breaks = batch_one_misfits(estimate)
    rows = []
    for c in estimate.cards:
        named = tuple((_METHOD_LABELS.get(m, m), v) for m, n in c.batches if n == 0 and (v := breaks.get((c.name, m))))
        rows.append(CardFit(c.name, c.memory_gb, tuple((_METHOD_LABELS.get(m, m), n) for m, n in c.batches),
                            tuple((label, v.short) for label, v in named), named[0][1].budget_gb if named else None))
    return tuple(rows)


def estimate_view(estimate: Estimate | None) -> EstimateView | None:
    """The headline figures of an estimate (None when the revision has none)."""
    if estimate is None:
        return None
    peaks = estimate.memory.peaks.items() if estimate.memory else ()
    return EstimateView(
        params=estimate.params.derived if estimate.params else None,
        checkpoint_params=estimate.params.checkpoint if estimate.params else None,
        memory=tuple((_PEAK_LABELS[k], int(gb * 1e9)) for k, gb in peaks if gb is not None),
        cards=_cards(estimate),
        settings=_settings_line(estimate),
        error=estimate.error,
        support=support_words(estimate.params.support) if estimate.params else None,
        misfits=tuple(v for v in estimate_verdicts(estimate) if not v.fits),
    )


def chart_view(data: Mapping[str, Any] | None) -> EstimateView | None:
    """Only what the charts plot of a stored estimate (parameters and the headline memory peaks),
    decoded from those two keys alone: equal in `params` and `memory` to
    `estimate_view(Estimate.from_json(data))`, without parsing cards, findings or structure."""
    if not isinstance(data, Mapping):
        return None
    if "error" in data:  # a failed estimate plots nothing, as Estimate.failed shows nothing
        return EstimateView(params=None, checkpoint_params=None, memory=())
    params = Params.from_json(data.get("params"))
    peaks = PeakMemory.from_json(data.get("memory_gb")).items()
    return EstimateView(
        params=params.derived if params else None,
        checkpoint_params=params.checkpoint if params else None,
        memory=tuple((_PEAK_LABELS[k], int(gb * 1e9)) for k, gb in peaks if gb is not None),
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


def revision_json(repo: str, entry: HistoryEntryLike, on_main_line: bool = True) -> dict[str, Any]:
    """Everything stored about one revision (changes with detail, estimate, advisories), and whether
    it is on the main line (False: a force-push or squash upstream dropped it)."""
    revision = entry.revision
    return {
        "repo": repo,
        "sha": revision.sha,
        "parent": revision.parent,
        "position": entry.position,
        "on_main_line": on_main_line,
        "date": rfc3339(revision.date),
        "title": revision.title,
        "message": revision.message,
        "authors": list(revision.authors),
        "changes": [change_json(c, detail=True) for c in entry.changes],
        "estimate": entry.estimate,
        "estimator_version": entry.estimator_version,
        "advisories": list(entry.advisory_ids),
    }
