"""One `hubwatch estimate` result per target: the Analysis and the typed Estimate, or why it failed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hubwatch.cli.estimate_inputs import TargetInputs
from hubwatch.estimator import Analysis, Estimate
from hubwatch.estimator.cards import Card
from hubwatch.estimator.cost import RunShape
from hubwatch.estimator.memory_settings import MemorySettings

__all__ = ["DEFAULT_SEQ_LEN", "EstimateEntry", "FailedEntry", "estimate_entry"]

DEFAULT_SEQ_LEN = 2048


@dataclass(frozen=True)
class EstimateEntry:
    """A target estimated: its analysis (with the layer graph) and its Estimate."""

    target: str
    source: str  # "file", "folder" or "hub"
    analysis: Analysis
    estimate: Estimate

    def to_json(self) -> dict[str, Any]:
        """The `--json` entry: the analysis (structure with nodes), then memory, cards and cost."""
        return {"target": self.target, "source": self.source, **self.analysis.to_json(),
                **self.estimate.memory_json(), "model_type": self.analysis.spec.model_type,
                "total_params": self.analysis.spec.total_params}


@dataclass(frozen=True)
class FailedEntry:
    """A target that could not be estimated, with a one-line reason."""

    target: str
    error: str

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "error": self.error}


def estimate_entry(inputs: TargetInputs, settings: MemorySettings, *, cards: tuple[Card, ...], run: RunShape,
                   cost_card: Card | None) -> EstimateEntry:
    """The analysis (structure, parameters, findings) and the Estimate (memory, cards, cost) of one target."""
    from hubwatch.estimator import analyze
    from hubwatch.estimator.memory_report import memory_report, with_analysis

    def run_analysis(seq_len: int) -> Analysis:
        return analyze(inputs.config, manifest=inputs.manifest, tokenizer_config=inputs.tokenizer_config,
                       generation_config=inputs.generation_config, seq_len=seq_len,
                       model=inputs.target if inputs.source == "hub" else None, revision=inputs.revision)

    analysis = run_analysis(settings.seq_len or DEFAULT_SEQ_LEN)
    context = analysis.spec.max_position_embeddings
    if settings.seq_len is None and context and context < DEFAULT_SEQ_LEN:
        analysis = run_analysis(context)  # the default length is capped at the model's context, as for memory
    report = memory_report(analysis.spec, settings, cards=cards, run=run, cost_card=cost_card)
    return EstimateEntry(inputs.target, inputs.source, analysis, with_analysis(report, analysis))
