"""One `hubwatch estimate` result per target: the Analysis and the typed Estimate, or why it failed."""

from __future__ import annotations

from typing import Any

from hubwatch.cli.estimate_inputs import TargetInputs
from hubwatch.estimator import Analysis, Estimate
from hubwatch.estimator.cards import Card
from hubwatch.estimator.frozen import frozen
from hubwatch.estimator.cost import RunShape
from hubwatch.estimator.inputs import DEFAULT_SEQ_LEN
from hubwatch.estimator.memory.settings import MemorySettings
from hubwatch.estimator.support import Support
from hubwatch.estimator.verdict import estimate_verdicts, support_words

__all__ = ["DEFAULT_SEQ_LEN", "EstimateEntry", "FailedEntry", "estimate_entry"]


@frozen
class EstimateEntry:
    """A target estimated: its analysis (with the layer graph) and its Estimate."""

    target: str
    source: str  # "file", "folder" or "hub"
    analysis: Analysis
    estimate: Estimate

    def to_json(self) -> dict[str, Any]:
        """The `--json` entry: the analysis (structure with nodes), then memory, cards and cost; `support`
        (params.support in words: level, reasons, bound, text) and `verdicts` (the selected method on each
        card: fits, or the term that breaks the card's budget)."""
        words = support_words(self.analysis.params.support)
        return {"target": self.target, "source": self.source, **self.analysis.to_json(),
                **self.estimate.memory_json(), "model_type": self.analysis.spec.model_type,
                "total_params": self.analysis.spec.total_params,
                "support": None if words is None else words.to_json(),
                "verdicts": [v.to_json() for v in estimate_verdicts(self.estimate)]}


@frozen
class FailedEntry:
    """A target that could not be estimated, with a one-line reason (and, for a config the estimator
    cannot read, its `unsupported` support naming the key; for a local file that is no config, the fix)."""

    target: str
    error: str
    support: Support | None = None
    fix: str = ""  # the fix, for a target that is bad input (`usage`)
    usage: bool = False  # a local target that is not a readable config: exit 2, not 1

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"target": self.target, "error": self.error}
        if self.fix:
            out["fix"] = self.fix
        if self.support is not None:
            out["params"] = {"support": self.support.to_json()}
            words = support_words(self.support)
            if words is not None:
                out["support"] = words.to_json()
        return out


def estimate_entry(inputs: TargetInputs, settings: MemorySettings, *, cards: tuple[Card, ...], run: RunShape,
                   cost_card: Card | None) -> EstimateEntry:
    """The analysis (structure, parameters, findings) and the Estimate (memory, cards, cost) of one target."""
    from hubwatch.estimator.inputs import EstimatorInputs, estimate_inputs

    inputs_ = EstimatorInputs(inputs.config, inputs.manifest, inputs.tokenizer_config, inputs.generation_config,
                              inputs.revision)
    analysis, estimate = estimate_inputs(inputs_, settings, cards=cards, run=run, cost_card=cost_card,
                                         model=inputs.target if inputs.source == "hub" else None)
    return EstimateEntry(inputs.target, inputs.source, analysis, estimate)
