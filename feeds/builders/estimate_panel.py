"""The estimate panel: everything `hubwatch estimate` shows of one config, as a view the template reads.

`estimate_panel(inputs, settings)` runs the estimator's own procedure (`estimator.inputs.
estimate_inputs`, the CLI's) and shapes the result: parameters derived vs checkpoint with the
delta explained, by component; memory per method with its terms; the largest batch per card and
the cards needed at batch 1; the cost of the run (card-hours and dollars); the structure with
output shapes and the forward-pass check; lints with their fixes; the custom-code flag. Anything
the estimator refuses comes back as a `PanelError` naming the field, never raised.
`PanelCache` keeps recent panels per (revision or config digest, settings).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hubwatch.estimator.estimate_parts import CARD_METHODS, MethodError, PeakMemory
from hubwatch.estimator.lints import Finding
from hubwatch.estimator.params.structure import Node
from hubwatch.estimator.verdict import SupportWords, Verdict, batch_one_misfits, estimate_verdicts, support_words
from hubwatch.feeds.builders.plan_settings import PlanSettings

if TYPE_CHECKING:
    from hubwatch.estimator.api import Analysis
    from hubwatch.estimator.estimate import Estimate
    from hubwatch.estimator.inputs import EstimatorInputs

__all__ = ["CardRow", "ComponentRow", "CostView", "EstimatePanel", "MAX_NODES", "MethodRow", "PanelCache",
           "PanelError", "estimate_panel", "panel_of"]

MAX_NODES = 1500  # layer-graph rows shown; the rest are counted (a hostile config may list millions)
METHOD_LABELS = {"full": "full fine-tune", "lora": "LoRA", "qlora": "QLoRA", "serve": "inference (serve)"}
_LEVEL_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class ComponentRow:
    name: str
    params: int
    share_pct: float | None  # of the derived total


@dataclass(frozen=True)
class MethodRow:
    """One method at the settings: its peak and what the card must hold, with the terms alive at the peak."""

    method: str
    label: str
    selected: bool
    peak_gb: float | None = None
    required_gb: float | None = None
    trainable_params: int | None = None
    moment: str = ""
    terms: tuple[tuple[str, float], ...] = ()  # (term, GB), the zero ones left out
    error: str | None = None  # why the model cannot run the method


@dataclass(frozen=True)
class CardRow:
    name: str
    memory_gb: float | None
    batches: tuple[tuple[str, int | None], ...]  # (method, largest batch: 0 none fits, None cannot run)
    cards_needed: tuple[tuple[str, int | None], ...]  # (method, cards at batch 1 for a pipeline split)
    # (method, the term that breaks this card at batch 1), for the cells that do not fit: known when the
    # settings' batch is 1, the batch whose terms the estimate carries
    breaks: tuple[tuple[str, str], ...] = ()
    budget_gb: float | None = None  # the peak the card allows, shown beside the card when a cell names a term


@dataclass(frozen=True)
class CostView:
    """One training run of the selected method, as the CLI's `cost` row, with the card-hours spelled out."""

    method: str
    card: str
    cards: int
    hours: float
    card_hours: float
    usd: float | None
    usd_per_card_hour: float | None
    tokens: float
    flops: float
    epochs: float
    samples: int
    utilisation: float
    price_table_date: str
    chosen: bool  # True: the card asked for; False: the cheapest that fits
    tokens_per_sample: int = 0  # the sequence length, or a dataset's estimate capped at it
    tokens_estimated: bool = False  # tokens per sample from a dataset's metadata (below the sequence length)


@dataclass(frozen=True)
class EstimatePanel:
    model: str
    revision: str | None
    family: str
    model_type: str | None
    generic: bool  # an unknown architecture, estimated as a generic decoder
    support_level: str  # params.support: modelled, approximate or unsupported
    support_line: str  # that level in words, its reasons and its bound ("approximate — …; expected within 25%")
    custom_code: bool
    derived: int
    checkpoint: int | None
    delta_pct: float | None
    explanation: str
    active: int
    components: tuple[ComponentRow, ...]
    layers: int
    input_shape: tuple[int, ...]
    forward_pass_ok: bool
    failures: tuple[str, ...]
    nodes: tuple[Node, ...]
    node_count: int
    stack: str
    seq_len: int
    batch: int
    lora_rank: int
    serve_dtype: str
    peaks: PeakMemory
    methods: tuple[MethodRow, ...]
    cards: tuple[CardRow, ...]
    cost: CostView | None
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    assumptions: tuple[str, ...]
    # The selected method on each card at the settings: fits, or the term that breaks the card's budget
    verdicts: tuple[Verdict, ...] = ()

    @property
    def misfits(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if not v.fits)

    @property
    def fits_on(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.fits)

    @property
    def card_methods(self) -> tuple[tuple[str, str], ...]:
        """(method, label) of the card table's columns."""
        return tuple((m, METHOD_LABELS[m]) for m, _ in CARD_METHODS)

    def level_counts(self) -> str:
        levels = [f.level for f in self.findings]
        return ", ".join(f"{levels.count(lv)} {lv}" for lv in ("error", "warning", "info") if lv in levels) or "none"


@dataclass(frozen=True)
class PanelError:
    """Why no panel: the field at fault (`config`, `config.KEY`, a setting) and the message."""

    field: str
    message: str
    # A config the estimator cannot count: params.support `unsupported` in words, naming the key (as the CLI
    # gives it for such a target)
    support_line: str = ""


def _methods(estimate: Estimate) -> tuple[MethodRow, ...]:
    memory = estimate.memory
    if memory is None:
        return ()
    chosen = memory.settings.method if memory.settings else None
    rows = []
    for m in memory.methods:
        label = METHOD_LABELS.get(m.method, m.method)
        if isinstance(m, MethodError):
            rows.append(MethodRow(m.method, label, m.method == chosen, error=m.error))
            continue
        rows.append(MethodRow(m.method, label, m.method == chosen, m.peak_gb, m.required_gb, m.trainable_params,
                              m.moment, tuple((n, v) for n, v in m.terms if v)))
    return tuple(rows)


def _cost(estimate: Estimate, settings: PlanSettings) -> CostView | None:
    c = estimate.cost
    if c is None:
        return None
    per_sample = round(c.tokens / (c.epochs * c.samples))  # RunShape.sample_tokens at the resolved seq len
    return CostView(c.method, c.card, c.cards, c.hours, round(c.hours * c.cards, 3), c.usd, c.usd_per_card_hour,
                    c.tokens, c.flops, c.epochs, c.samples, c.utilisation, c.price_table_date,
                    settings.card is not None, per_sample,
                    settings.run.tokens_per_sample is not None and per_sample == settings.run.tokens_per_sample)


def _card_rows(estimate: Estimate) -> tuple[CardRow, ...]:
    breaks = batch_one_misfits(estimate)
    rows = []
    for c in estimate.cards:
        misfits = {m: v for (card, m), v in breaks.items() if card == c.name}
        cells = tuple((m, misfits[m].short) for m, n in c.batches if n == 0 and m in misfits)
        budget = next(iter(misfits.values())).budget_gb if cells else None
        rows.append(CardRow(c.name, c.memory_gb, c.batches, c.cards_needed, cells, budget))
    return tuple(rows)


def _support_line(words: SupportWords | None) -> str:
    return words.text if words is not None else "not recorded (an estimate made before support levels)"


def panel_of(analysis: Analysis, estimate: Estimate, settings: PlanSettings) -> EstimatePanel:
    """The view of an analysis and its Estimate at `settings`."""
    p = analysis.params
    s = analysis.structure
    total = p.derived
    memory = estimate.memory
    resolved = memory.settings if memory and memory.settings else settings.memory
    nodes = tuple(s.nodes[:MAX_NODES])
    return EstimatePanel(
        model=analysis.model, revision=analysis.revision, family=analysis.family,
        model_type=analysis.spec.model_type,
        generic=analysis.family == "unknown" or any(n.startswith("unknown architecture") for n in analysis.notes),
        support_level=p.support.level, support_line=_support_line(support_words(p.support)),
        custom_code=analysis.custom_code, derived=total, checkpoint=p.checkpoint, delta_pct=p.delta_pct,
        explanation=p.explanation, active=p.active,
        components=tuple(ComponentRow(n, v, round(100 * v / total, 1) if total else None)
                         for n, v in p.by_component.items()),
        layers=s.layers, input_shape=s.input_shape, forward_pass_ok=s.forward_pass_ok, failures=tuple(s.failures),
        nodes=nodes, node_count=len(s.nodes),
        stack=resolved.stack, seq_len=resolved.seq_len or 0, batch=resolved.batch, lora_rank=resolved.lora_rank,
        serve_dtype=resolved.serve_dtype, peaks=memory.peaks if memory else PeakMemory(),
        methods=_methods(estimate),
        cards=_card_rows(estimate),
        cost=_cost(estimate, settings),
        findings=tuple(sorted(analysis.findings, key=lambda f: _LEVEL_ORDER.get(f.level, 3))),
        notes=analysis.notes, assumptions=estimate.assumptions, verdicts=estimate_verdicts(estimate),
    )


def estimate_panel(inputs: EstimatorInputs, settings: PlanSettings, *, model: str | None = None
                   ) -> EstimatePanel | PanelError:
    """The panel of `inputs` at `settings`, or what stopped it (a config key, a setting), as the CLI says it."""
    from hubwatch.estimator.config import ConfigError
    from hubwatch.estimator.inputs import estimate_inputs
    from hubwatch.estimator.memory.settings import MemorySettingsError

    try:
        analysis, estimate = estimate_inputs(inputs, settings.memory, cards=settings.cards, run=settings.run,
                                             cost_card=settings.card, model=model)
    except ConfigError as exc:
        from hubwatch.estimator.support import Support

        where = f"config.{exc.key}" if exc.key and exc.key != "config" else "config"
        return PanelError(where, f"{where}: {exc.problem}",
                          _support_line(support_words(Support.unsupported(exc.problem, exc.key))))
    except MemorySettingsError as exc:
        return PanelError(exc.name, str(exc))
    except (ValueError, TypeError, LookupError, ArithmeticError, RecursionError) as exc:
        # A config the estimator's model code trips over must not take the page down.
        return PanelError("config", f"config: the estimator cannot read it ({type(exc).__name__}: {exc})")
    return panel_of(analysis, estimate, settings)


PanelKey = tuple[str, PlanSettings]


class PanelCache:
    """The most recent panels by (revision or config digest, settings): an LRU, safe across threads."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._items: OrderedDict[PanelKey, EstimatePanel | PanelError] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: PanelKey, make: Callable[[], EstimatePanel | PanelError | None]
            ) -> EstimatePanel | PanelError | None:
        """The cached panel of `key`, else `make()`'s (kept unless None: nothing to estimate)."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()  # outside the lock: estimating takes milliseconds, other keys need not wait
        if value is not None:
            with self._lock:
                self._items[key] = value
                while len(self._items) > self._size:
                    self._items.popitem(last=False)
        return value
