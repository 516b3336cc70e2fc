"""What a reader is told beside an estimate's numbers: the support level with its reasons in words, and
whether a method's memory fits a card and, when it does not, the term that breaks it.

Pure functions of the estimate's own values (`Support`, `MethodMemory`, the card rows), so that the
CLI's table and JSON, the estimate panel, the revision page and /plan say the same thing:

- `support_words(support)`: "modelled — every mechanism the config describes is read; expected within
  1%", "approximate — <what is guessed>; expected within 25%", "unsupported — <why> (key K): no number";
- `fit_verdict(memory, card, card_gb)`: "does not fit on L4 (24 GB): weights is 26.9 GB of a 20.4 GB
  budget". The budget is what the card leaves for the peak, `(card − framework overhead) ÷ headroom`
  (the fit rule `peak × headroom + overhead ≤ card`, solved for the peak); the term named is the
  largest alive at the peak when it alone passes the budget, else the largest is named with the term
  whose addition, taking the terms largest first, takes the peak past it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hubwatch.estimator.frozen import frozen
from hubwatch.estimator.support import APPROXIMATE, MODELLED, UNSUPPORTED, Support

if TYPE_CHECKING:
    from hubwatch.estimator.estimate import Estimate
    from hubwatch.estimator.estimate_parts import MethodMemory

__all__ = ["BOUNDS", "SupportWords", "Verdict", "batch_one_misfits", "estimate_verdicts", "fit_verdict",
           "support_words"]

# What each level promises of the parameter count (issue 35: modelled within 1%, approximate within 25%).
BOUNDS = {MODELLED: "expected within 1%", APPROXIMATE: "expected within 25%", UNSUPPORTED: "no number"}
_MODELLED_REASON = "every mechanism the config describes is read"


@frozen
class SupportWords:
    """A support level and its reasons, as people read them (`text`) and as JSON (`to_json`)."""

    level: str
    reasons: tuple[str, ...]

    @property
    def bound(self) -> str:
        return BOUNDS.get(self.level, "")

    @property
    def text(self) -> str:
        """`level — reasons; bound` (modelled: its one reason; unsupported: why, then "no number")."""
        reasons = "; ".join(self.reasons) or (_MODELLED_REASON if self.level == MODELLED else "")
        if self.level == UNSUPPORTED:
            return f"{self.level} — {reasons or 'no reason given'}: {self.bound}"
        return f"{self.level} — {reasons}; {self.bound}" if reasons else f"{self.level} — {self.bound}"

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "reasons": list(self.reasons), "bound": self.bound, "text": self.text}


def support_words(support: Support | None) -> SupportWords | None:
    """`support` in words (None: an estimate stored before support was recorded)."""
    if support is None:
        return None
    if support.level == UNSUPPORTED:
        reason = support.reason + (f" (key {support.key})" if support.key and support.key not in support.reason
                                   else "")
        return SupportWords(UNSUPPORTED, (reason,) if reason else ())
    return SupportWords(support.level, tuple(support.guessed) if support.level == APPROXIMATE else ())


def _term(name: str) -> str:
    return name.replace("_", " ")


@frozen
class Verdict:
    """Whether one method's memory (at its settings' batch and sequence length) fits one card, and why not."""

    method: str
    card: str
    card_gb: float
    batch: int
    seq_len: int
    fits: bool
    peak_gb: float
    required_gb: float
    budget_gb: float  # the peak the card allows: (card − framework overhead) ÷ headroom
    term: str  # the largest term alive at the peak ("" when there is none)
    term_gb: float
    crossing: str = ""  # the term whose addition passes the budget, when the largest alone does not
    crossing_gb: float = 0.0
    overhead_gb: float = 0.0  # the framework overhead and the headroom the budget is made with
    headroom: float = 1.0

    @property
    def reason(self) -> str:
        """The verdict without the card: "weights is 26.9 GB of a 20.4 GB budget" (or what it needs)."""
        budget = f"a {max(self.budget_gb, 0.0):.1f} GB budget"
        if self.fits:
            return f"needs {self.required_gb:.1f} GB (peak {self.peak_gb:.1f} GB of {budget})"
        if not self.term:
            return f"the peak is {self.peak_gb:.1f} GB of {budget}"
        said = f"{_term(self.term)} is {self.term_gb:.1f} GB of {budget}"
        if self.crossing:
            said += (f"; adding {_term(self.crossing)} ({self.crossing_gb:.1f} GB) passes it"
                     f" (peak {self.peak_gb:.1f} GB)")
        return said

    @property
    def short(self) -> str:
        """The term that breaks it, for a table cell beside the card's budget: "weights 26.9 GB" (with a
        crossing term: "activations 13.4 + logits 3.1 GB"); what it needs when it fits."""
        if self.fits:
            return f"needs {self.required_gb:.1f} GB"
        if not self.term:
            return f"peak {self.peak_gb:.1f} GB"
        if not self.crossing:
            return f"{_term(self.term)} {self.term_gb:.1f} GB"
        return f"{_term(self.term)} {self.term_gb:.1f} + {_term(self.crossing)} {self.crossing_gb:.1f} GB"

    @property
    def line(self) -> str:
        """"does not fit on L4 (24 GB): weights is 26.9 GB of a 20.4 GB budget", or "fits on …: needs …"."""
        return f"{'fits' if self.fits else 'does not fit'} on {self.card} ({self.card_gb:g} GB): {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "card": self.card, "card_gb": self.card_gb, "batch": self.batch,
                "seq_len": self.seq_len, "fits": self.fits, "peak_gb": self.peak_gb,
                "required_gb": self.required_gb, "budget_gb": round(self.budget_gb, 3),
                "term": self.term or None, "term_gb": self.term_gb,
                "crossing": self.crossing or None, "crossing_gb": self.crossing_gb if self.crossing else None,
                "overhead_gb": self.overhead_gb, "headroom": self.headroom, "line": self.line}


def fit_verdict(memory: MethodMemory, card: str, card_gb: float, fits: bool | None = None) -> Verdict:
    """Whether `memory` fits a card of `card_gb` (decimal GB) and, when not, the term that breaks it.

    `fits`, when given, is the answer of the estimate's own batch search (`estimate_verdicts` passes
    it), which works in bytes: the GB figures here are rounded to 3 decimals and could disagree at the
    edge; without it the rule is applied to those figures."""
    budget = (card_gb - memory.framework_overhead_gb) / memory.headroom
    terms = sorted(((n, v) for n, v in memory.terms if v > 0), key=lambda t: -t[1])
    largest, largest_gb = terms[0] if terms else ("", 0.0)
    if fits is None:
        fits = memory.required_gb <= card_gb
    crossing, crossing_gb = "", 0.0
    if not fits and terms and largest_gb <= budget:
        total = 0.0
        crossing, crossing_gb = terms[-1]  # the last term, should rounding keep the sum within the budget
        for name, value in terms:
            total += value
            if total > budget:
                crossing, crossing_gb = name, value
                break
    return Verdict(memory.method, card, card_gb, memory.batch, memory.seq_len, fits, memory.peak_gb,
                   memory.required_gb, budget, largest, largest_gb, crossing, crossing_gb,
                   memory.framework_overhead_gb, memory.headroom)


def estimate_verdicts(estimate: Estimate, method: str | None = None) -> tuple[Verdict, ...]:
    """The verdict of `method` (default: the one the settings select) on each of the estimate's cards, in
    their order; empty when the method has no memory (it cannot run, or memory was not estimated)."""
    from hubwatch.estimator.estimate_parts import MethodMemory

    memory = estimate.memory
    if memory is None:
        return ()
    chosen = memory.selected if method is None else memory.method(method)
    if not isinstance(chosen, MethodMemory):
        return ()
    return tuple(fit_verdict(chosen, c.name, c.memory_gb, _fits(c.batch(chosen.method), chosen.batch))
                 for c in estimate.cards if c.memory_gb)


def _fits(largest: int | None, batch: int) -> bool | None:
    """The card table's answer at `batch`: its largest batch is at least it (None: the table has none)."""
    return None if largest is None else largest >= batch


def batch_one_misfits(estimate: Estimate) -> dict[tuple[str, str], Verdict]:
    """(card, method) → the verdict of each method that does not fit a card at batch 1 — the batch table's
    "does not fit" cells — read from each method's terms when they are at batch 1 (the terms are the
    settings' batch: at another batch they say nothing of batch 1, and nothing is returned for them)."""
    from hubwatch.estimator.estimate_parts import MethodMemory

    memory = estimate.memory
    if memory is None:
        return {}
    out: dict[tuple[str, str], Verdict] = {}
    for m in memory.methods:
        if isinstance(m, MethodMemory) and m.batch == 1:
            for c in estimate.cards:
                v = fit_verdict(m, c.name, c.memory_gb, _fits(c.batch(m.method), 1)) if c.memory_gb else None
                if v is not None and not v.fits:
                    out[(c.name, m.method)] = v
    return out
