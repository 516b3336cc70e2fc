"""Builds the typed `Estimate` of a model: memory per method, batch per card and cost, with the analysis.

`estimate_revision` is what the tracker stores per revision (its `to_json()`); `memory_report` is
the memory part alone, for the CLI's own cards, prices and run shape. How two estimates differ is
`estimate_delta.estimate_delta`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import repeat
from typing import TYPE_CHECKING, Any

from hubwatch.estimator.api import ESTIMATOR_VERSION, Analysis, analyze
from hubwatch.estimator.cards import DEFAULT_CARDS, BatchFit, Card, cards_needed, cards_needed_many
from hubwatch.estimator.cost import PRICE_TABLE_DATE, RunShape, run_flops, run_hours
from hubwatch.estimator.estimate import Estimate, Memory
from hubwatch.estimator.estimate_parts import (
    CARD_METHODS, CardFit, Cost, MethodError, MethodMemory, Params, PeakMemory, StructureSummary,
)
from hubwatch.estimator.memory.peak import MemoryEstimate, MemoryModel, SharedFigures, memory_model
from hubwatch.estimator.memory.roles import LoraPlan, plan_lora
from hubwatch.estimator.memory.settings import MemorySettings, MemorySettingsError
from hubwatch.estimator.rounding import rounded
from hubwatch.estimator.params.spec import ModelSpec

if TYPE_CHECKING:
    from hubwatch.estimator.manifest import Manifest

__all__ = ["ASSUMPTIONS", "estimate_revision", "memory_delta_summary", "memory_report", "with_analysis"]

ASSUMPTIONS: tuple[str, ...] = (
    "GB are decimal (1e9 bytes); peak_gb is peak allocated memory (torch.cuda.max_memory_allocated), "
    "without headroom or the CUDA context",
    "a card fits when peak × headroom + framework overhead (CUDA context) ≤ its nominal memory",
    "full fine-tune: amp-bf16 keeps fp32 weights, fp32 gradients and bf16 copies of the matrices during "
    "forward/backward; bf16 keeps everything bf16; AdamW states are in the parameter dtype (fused step); "
    "adamw-8bit keeps two 1-byte states; sgd keeps one momentum state",
    "LoRA: base frozen in bf16, adapters (A: r×in, B: out×r) and their states in the recipe's parameter dtype; "
    "QLoRA: block linears in NF4 with double-quantised constants, embeddings/norms/head in bf16, "
    "one matrix dequantised at a time",
    "activations: per-tensor Korthikanti model for SDPA/flash attention without dropout; frozen "
    "matrices keep no input; checkpointing keeps layer inputs and recomputes one layer",
    "logits: compute-dtype logits, an fp32 copy for the loss and its log-softmax, and the fp32 gradient chain "
    "(stack hf/axolotl); torchtune upcasts one of 8 chunks at a time, LitGPT keeps bf16 chunks, Unsloth fuses "
    "the loss and keeps only the hidden states' gradient",
    "stack: hf (transformers Trainer + PEFT), torchtune, unsloth, litgpt or axolotl sets the loss path, model code, "
    "checkpointing and offloading left unset; paged optimizer states and offloaded activations are host_gb, "
    "outside the GPU peak",
    "serving: weights at the serve dtype (int8/int4 apply to block linears), KV cache for batch × seq_len "
    "(GQA, sliding windows, MLA latent, cross-attention), one layer's prefill activations",
    "vision/audio towers count in weights but not in activations (text-only batches)",
    "cost: roofline FLOPs (2·active params + causal attention per token; ×3 full, ×2 LoRA, +1 with "
    "checkpointing) at the stated utilisation; prices are indicative",
)


def _models(spec: ModelSpec, settings: MemorySettings, strict: bool) -> dict[str, MemoryModel | str]:
    """Each card method's memory with the batch left open, built once (or why the model cannot run it);
    LoRA and QLoRA share one adapter plan, and the methods what they ask alike of the spec (`SharedFigures`)."""
    out: dict[str, MemoryModel | str] = {}
    plan: LoraPlan | MemorySettingsError | None = None
    shared = SharedFigures()
    for method, _ in CARD_METHODS:
        try:
            if method in ("lora", "qlora"):
                if plan is None:
                    try:
                        plan = plan_lora(spec, settings.lora_rank, settings.lora_targets)
                    except MemorySettingsError as exc:
                        plan = exc
                if isinstance(plan, MemorySettingsError):
                    raise plan
            out[method] = memory_model(spec, settings, method, lora_plan=plan if isinstance(plan, LoraPlan) else None,
                                       shared=shared)
        except MemorySettingsError as exc:
            if strict and method == settings.method:
                raise
            out[method] = str(exc)
    return out


def _card_fits(cards: tuple[Card, ...], models: dict[str, MemoryModel | str], ones: dict[str, MemoryEstimate]
               ) -> tuple[tuple[CardFit, ...], dict[str, dict[float, int | None]]]:
    """Largest batch and cards needed at batch 1 (`ones`: each method's estimate there) per card, and
    the cards needed per card memory of each method that runs (for the cost, at batch 1).

    Both depend on the card only through its memory, so cards of one size share them; a method whose
    batch 1 fits (largest batch ≥ 1, the same comparison as `cards_needed`'s) needs one card.
    """
    first: dict[float, Card] = {}
    for card in cards:
        first.setdefault(card.memory_bytes, card)
    sizes = tuple(first)
    # Per method, its (method, largest batch) at each size; per method that runs, its (method, cards needed):
    # pairs zipped in C, read once, across, below.
    batch_columns: list[Iterable[tuple[str, int | None]]] = []
    need_columns: list[Iterable[tuple[str, int | None]]] = []
    needed: dict[str, dict[float, int | None]] = {}
    for method, _ in CARD_METHODS:
        model = models[method]
        if isinstance(model, str):
            batch_columns.append([(method, None)] * len(sizes))
            continue
        one = ones[method]
        largest = BatchFit(model, one).largest_many(sizes)
        counts: list[int | None]
        if all(largest):  # batch 1 fits every size: one card each
            counts = [1] * len(largest)
        else:
            short = tuple([size for batch, size in zip(largest, sizes) if not batch])  # sizes batch 1 does not fit
            more = iter(cards_needed_many(one, short))
            counts = [1 if batch else next(more) for batch in largest]
        needed[method] = dict(zip(sizes, counts))
        batch_columns.append(zip(repeat(method), largest))
        need_columns.append(zip(repeat(method), counts))
    # Each size's row: the columns read across.
    need_rows = zip(*need_columns) if need_columns else [()] * len(sizes)
    rows = dict(zip(sizes, zip(zip(*batch_columns), need_rows)))
    return tuple([CardFit(card.name, card.memory_gb, *rows[card.memory_bytes]) for card in cards]), needed


def memory_report(spec: ModelSpec, settings: MemorySettings | None = None, *, cards: tuple[Card, ...] = DEFAULT_CARDS,
                  run: RunShape | None = None, cost_card: Card | None = None, strict: bool = True) -> Estimate:
    """Memory per method, each method's terms, batch per card and the cost, as an Estimate without
    the analysis parts.

    With `strict`, a selected method the model cannot run (a LoRA target it lacks) raises
    MemorySettingsError; otherwise that method is reported as a `MethodError`.
    """
    return _report(spec, settings or _DEFAULT_SETTINGS, cards, run or _DEFAULT_RUN, cost_card, strict, None)


def _report(spec: ModelSpec, settings: MemorySettings, cards: tuple[Card, ...], run: RunShape, cost_card: Card | None,
            strict: bool, analysis: Analysis | None) -> Estimate:
    """`memory_report`, with the analysis parts of `analysis` when given (`with_analysis` in one step)."""
    models = _models(spec, settings, strict)
    estimates = {m: model if isinstance(model, str) else model.at(settings.batch) for m, model in models.items()}
    ones = {m: est for m, est in estimates.items() if not isinstance(est, str)} if settings.batch == 1 else \
        {m: model.at(1) for m, model in models.items() if not isinstance(model, str)}
    seq_len = settings.resolved_seq_len(spec.max_position_embeddings)
    methods = tuple([MethodError(m, e) if isinstance(e, str) else MethodMemory.of(e) for m, e in estimates.items()])
    # The headline figures are the methods' own, rounded to GB once.
    by_method = {m.method: m for m in methods}

    def peak(method: str) -> float | None:
        m = by_method[method]
        return None if isinstance(m, MethodError) else m.peak_gb

    serve = by_method["serve"]
    peaks = PeakMemory(
        full_finetune=peak("full"), lora=peak("lora"), qlora=peak("qlora"),
        serve_weights=None if isinstance(serve, MethodError) else serve.term("weights"),
        kv_cache=None if isinstance(serve, MethodError) else serve.term("kv_cache"),
    )
    selected = estimates[settings.method]
    fits, needed = _card_fits(cards, models, ones)
    # At batch 1 the selected method's estimate is the one the card fits used: its cards needed are known.
    known = dict(needed.get(settings.method, {})) if settings.batch == 1 else {}
    return Estimate(
        ESTIMATOR_VERSION,
        memory=Memory(_resolved(settings, seq_len), peaks, methods),
        cards=fits,
        cost=None if isinstance(selected, str) else _cost(spec, settings, selected, cards, run, cost_card, known),
        assumptions=ASSUMPTIONS,
        **({} if analysis is None else _analysis_parts(analysis)),
    )


_DEFAULT_SETTINGS = MemorySettings()
_DEFAULT_RUN = RunShape()  # frozen: one for every report
# Resolved settings by the identity of the (frozen) settings object: one backfill estimates every
# revision with the same object. Keyed by identity, not equality, so that settings equal but not
# alike (headroom 1 and 1.0) are each reported as given; the entry holds its object, so ids stay unique.
_RESOLVED: dict[tuple[int, int], tuple[MemorySettings, MemorySettings]] = {}


def _resolved(settings: MemorySettings, seq_len: int) -> MemorySettings:
    """The settings as reported: the sequence length resolved (the model's context caps the default) and
    every setting left to the training stack filled in."""
    key = (id(settings), seq_len)
    hit = _RESOLVED.get(key)
    if hit is not None and hit[0] is settings:
        return hit[1]
    out = settings.resolved().with_(seq_len=seq_len)
    if len(_RESOLVED) >= 64:
        _RESOLVED.clear()
    _RESOLVED[key] = (settings, out)
    return out


def _cost(spec: ModelSpec, settings: MemorySettings, est: MemoryEstimate, cards: tuple[Card, ...],
          run: RunShape, cost_card: Card | None, needed: dict[float, int | None]) -> Cost | None:
    """The cheapest run of `est`'s method (the fewest hours among equal prices) on `cost_card`, else on
    any of `cards` with a known peak; `needed` holds the cards `est` needs per card memory where known."""
    if est.method == "serve":
        return None
    options = [cost_card] if cost_card is not None else [c for c in cards if c.bf16_tflops > 0]
    # Tokens and FLOPs are the same on every card; cards of one memory size need as many.
    tokens, flops = run_flops(spec, est.method, seq_len=est.seq_len,
                              grad_checkpointing=settings.effective_checkpointing, run=run)
    # The best so far: its rank (its figures as the Cost reports them), card, cards, rounded USD, raw USD and hours.
    best: tuple[tuple[bool, float, float], Card, int, float | None, float | None, float] | None = None
    for card in options:
        size = card.memory_bytes
        n = needed[size] if size in needed else needed.setdefault(size, cards_needed(est, card))
        if n is None:
            continue
        if card.bf16_tflops <= 0:  # only a `cost_card` can lack one
            raise MemorySettingsError("card", f"{card.name} has no known peak throughput to cost a run on")
        hours, usd = run_hours(flops, card, n, run)
        if best is not None and _cannot_beat(usd, hours, best[4], best[5]):
            continue
        usd_rounded = None if usd is None else rounded(usd, 2)
        rank = (usd_rounded is None, usd_rounded or 0.0, rounded(hours, 3))  # as the Cost reports them
        if best is None or rank < best[0]:
            best = (rank, card, n, usd_rounded, usd, hours)
    if best is None:
        return None
    (_, _, hours), card, n, usd, _, _ = best
    return Cost(est.method, card.name, n, tokens, flops, hours, usd, card.usd_per_hour or None, PRICE_TABLE_DATE,
                run.utilisation, run.epochs, run.samples, run.tokens_per_sample)


def _cannot_beat(usd: float | None, hours: float, best_usd: float | None, best_hours: float) -> bool:
    """Whether a run of `usd` and `hours` ranks after the best so far without rounding its figures: a
    priced run always ranks first; rounding is monotone, so a run more than a cent dearer (or, both
    unpriced, a thousandth of an hour slower; a billionth more of large figures) rounds above it."""
    if best_usd is not None:
        return usd is None or usd > best_usd + 0.011 + 1e-9 * abs(best_usd)
    return usd is None and hours > best_hours + 0.0011 + 1e-9 * abs(best_hours)


def estimate_revision(analysis_or_config: Analysis | ModelSpec | Mapping[str, Any],
                      settings: MemorySettings | None = None, *, manifest: Manifest | None = None,
                      cards: tuple[Card, ...] = DEFAULT_CARDS) -> Estimate:
    """The Estimate of one revision: memory per method at `settings`, card fits, cost and (from an
    Analysis or a config) parameters, findings and structure.

    Accepts an `Analysis`, a `ModelSpec` (memory parts only), or a config dict (analysed with
    `hubwatch.estimator.analyze`, with the weight `manifest` when given). A method the model cannot
    run (e.g. LoRA targets it lacks) is reported as an error inside the result, not raised.
    """
    settings = settings or _DEFAULT_SETTINGS
    if isinstance(analysis_or_config, ModelSpec):
        analysis = None
        spec = analysis_or_config
    else:
        analysis = analysis_or_config if isinstance(analysis_or_config, Analysis) else \
            analyze(analysis_or_config, manifest=manifest)
        spec = analysis.spec
    # Per revision nothing may stop the record: a method the model cannot run is reported, not raised.
    return _report(spec, settings, cards, _DEFAULT_RUN, None, False, analysis)


def memory_delta_summary(old: Estimate, new: Estimate, threshold_pct: float = 5) -> str | None:
    """The lines saying how memory moved between two estimates, or None when it did not
    (`estimate_delta.memory_delta_summary`, imported when first asked: one estimate needs no delta)."""
    from hubwatch.estimator.estimate_delta import memory_delta_summary as summary

    return summary(old, new, threshold_pct)


def with_analysis(report: Estimate, analysis: Analysis) -> Estimate:
    """`report` with the analysis parts: model, revision, family, parameters, findings, structure."""
    from dataclasses import replace

    return replace(report, **_analysis_parts(analysis))


def _analysis_parts(analysis: Analysis) -> dict[str, Any]:
    """The Estimate fields an analysis fills in, by name."""
    p = analysis.params
    s = analysis.structure
    return {
        "model": analysis.model, "revision": analysis.revision, "family": analysis.family,
        "custom_code": analysis.custom_code,
        "params": Params(p.derived, p.checkpoint, p.delta_pct, p.active, tuple(p.by_component.items()), p.explanation,
                         p.support),
        "findings": analysis.findings, "notes": analysis.notes,
        "structure": StructureSummary(s.layers, s.forward_pass_ok, tuple(s.failures)),
    }
