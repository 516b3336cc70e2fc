"""`EstimateDelta`: how an estimate moved between two revisions (parameters, memory, cards), and its text.

`estimate_delta(old, new)` compares two Estimates; the tracker sets a change's severity from the
typed fields (`lost_cards`, `gained_cards`) and shows `memory_text` ("LoRA r=16 at 2048 tokens:
18.2 → 21.7 GB; no longer fits L4 24 GB").
"""

from __future__ import annotations


from hubwatch.estimator.estimate import Estimate
from hubwatch.estimator.frozen import frozen

__all__ = ["EstimateDelta", "MemoryChange", "ParamsChange", "estimate_delta", "memory_delta_summary"]

# Headline figure → (label template, the card-fit method it is judged on).
_LABELS: tuple[tuple[str, str, str | None], ...] = (
    ("full_finetune", "Full fine-tune ({precision}, {optimizer})", "full"),
    ("lora", "LoRA r={lora_rank}", "lora"),
    ("qlora", "QLoRA r={lora_rank}", "qlora"),
    ("serve_weights", "Serving weights ({serve_dtype})", "serve"),
    ("kv_cache", "KV cache (batch {batch})", None),
)


@frozen
class ParamsChange:
    """A parameter count that moved: `kind` is "derived" or "checkpoint"."""

    kind: str
    old: int
    new: int

    @property
    def line(self) -> str:
        return f"{self.kind} parameters {self.old:,} → {self.new:,}"


@frozen
class MemoryChange:
    """One headline memory figure that moved, or whose card fits (at batch 1) changed."""

    figure: str  # a PeakMemory key: full_finetune, lora, qlora, serve_weights, kv_cache
    label: str  # "LoRA r=16 at 2048 tokens"
    old_gb: float
    new_gb: float
    lost_cards: tuple[str, ...] = ()  # card labels ("L4 24 GB") that fitted and no longer do
    gained_cards: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        line = f"{self.label}: {self.old_gb:.1f} → {self.new_gb:.1f} GB"
        if self.lost_cards:
            line += f"; no longer fits {', '.join(self.lost_cards)}"
        if self.gained_cards:
            line += f"; now fits {', '.join(self.gained_cards)}"
        return line


@frozen
class EstimateDelta:
    """What changed between two estimates: parameters and memory."""

    params: tuple[ParamsChange, ...] = ()
    memory: tuple[MemoryChange, ...] = ()

    @property
    def lost_cards(self) -> tuple[str, ...]:
        """Every (figure, card) pair that fitted before and no longer does, as "figure: card"."""
        return tuple(f"{m.figure}: {card}" for m in self.memory for card in m.lost_cards)

    @property
    def gained_cards(self) -> tuple[str, ...]:
        return tuple(f"{m.figure}: {card}" for m in self.memory for card in m.gained_cards)

    @property
    def memory_text(self) -> str | None:
        return "\n".join(m.line for m in self.memory) or None

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(p.line for p in self.params) + tuple(m.line for m in self.memory)

    def __bool__(self) -> bool:
        return bool(self.params or self.memory)


def _params(old: Estimate, new: Estimate) -> tuple[ParamsChange, ...]:
    if old.params is None or new.params is None:
        return ()
    out = []
    for kind in ("derived", "checkpoint"):
        a, b = getattr(old.params, kind), getattr(new.params, kind)
        if a is not None and b is not None and a != b:
            out.append(ParamsChange(kind, a, b))
    return tuple(out)


def _fit_changes(old: Estimate, new: Estimate, method: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if method is None:
        return (), ()
    before = {card.name: card for card in old.cards}
    lost, gained = [], []
    for card in new.cards:
        if card.name not in before:
            continue
        a, b = before[card.name].batch(method), card.batch(method)
        if a is None or b is None:
            continue
        if a >= 1 and b == 0:
            lost.append(card.label)
        elif a == 0 and b >= 1:
            gained.append(card.label)
    return tuple(lost), tuple(gained)


def _memory(old: Estimate, new: Estimate, threshold_pct: float) -> tuple[MemoryChange, ...]:
    if old.memory is None or new.memory is None:
        return ()
    settings = new.memory.settings
    values = {k: "?" if settings is None else getattr(settings, k)
              for k in ("precision", "optimizer", "lora_rank", "serve_dtype", "batch")}
    seq = "?" if settings is None or settings.seq_len is None else settings.seq_len
    old_peaks, new_peaks = dict(old.memory.peaks.items()), dict(new.memory.peaks.items())
    out = []
    for figure, template, method in _LABELS:
        a, b = old_peaks[figure], new_peaks[figure]
        if a is None or b is None:
            continue
        moved = (abs(b - a) / a * 100 >= threshold_pct) if a > 0 else b > 0
        lost, gained = _fit_changes(old, new, method)
        if moved or lost or gained:
            out.append(MemoryChange(figure, f"{template.format(**values)} at {seq} tokens", a, b, lost, gained))
    return tuple(out)


def estimate_delta(old: Estimate, new: Estimate, threshold_pct: float = 5) -> EstimateDelta:
    """How `new` differs from `old`: parameter counts that changed, and each memory figure that moved
    by at least `threshold_pct` percent or whose card fits at batch 1 changed. Empty when either failed."""
    if old.error is not None or new.error is not None:
        return EstimateDelta()
    return EstimateDelta(_params(old, new), _memory(old, new, threshold_pct))


def memory_delta_summary(old: Estimate, new: Estimate, threshold_pct: float = 5) -> str | None:
    """The lines saying how memory moved between two estimates, or None when it did not."""
    return estimate_delta(old, new, threshold_pct).memory_text
