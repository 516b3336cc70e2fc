"""The memory/cards/cost part of an estimate as JSON, per revision, and the summary of how it moved.

`estimate_revision` is what the tracker stores per revision; `memory_delta_summary` turns two of
those into the lines a change summary or advisory shows ("LoRA r=16 at 2048 tokens: 18.2 → 21.7
GB; no longer fits L4 24 GB").
"""

from __future__ import annotations

from typing import Any

from hubwatch.estimator.cards import DEFAULT_CARDS, Card, cards_needed, max_batch
from hubwatch.estimator.cost import RunShape, training_cost
from hubwatch.estimator.memory import MemoryEstimate, estimate_memory
from hubwatch.estimator.memory_settings import MemorySettings, MemorySettingsError
from hubwatch.estimator.spec import ModelSpec

__all__ = ["ASSUMPTIONS", "estimate_revision", "memory_delta_summary", "memory_report"]

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
    "logits: compute-dtype logits, an fp32 copy for the loss and its log-softmax, and the fp32 gradient chain",
    "serving: weights at the serve dtype (int8/int4 apply to block linears), KV cache for batch × seq_len "
    "(GQA, sliding windows, MLA latent, cross-attention), one layer's prefill activations",
    "vision/audio towers count in weights but not in activations (text-only batches)",
    "cost: roofline FLOPs (2·active params + causal attention per token; ×3 full, ×2 LoRA, +1 with "
    "checkpointing) at the stated utilisation; prices are indicative",
)

_METHOD_KEYS = (("full", "full_finetune"), ("lora", "lora"), ("qlora", "qlora"), ("serve", "serve"))


def _gb(value: float) -> float:
    return round(value / 1e9, 3)


def _estimates(spec: ModelSpec, settings: MemorySettings, strict: bool) -> dict[str, MemoryEstimate | str]:
    out: dict[str, MemoryEstimate | str] = {}
    for method, _ in _METHOD_KEYS:
        try:
            out[method] = estimate_memory(spec, settings, method)
        except MemorySettingsError as exc:
            if strict and method == settings.method:
                raise
            out[method] = str(exc)
    return out


def _card_rows(spec: ModelSpec, settings: MemorySettings, cards: tuple[Card, ...],
               estimates: dict[str, MemoryEstimate | str]) -> list[dict[str, Any]]:
    rows = []
    at_one = settings.with_(batch=1)
    ones = {m: estimate_memory(spec, at_one, m) for m, e in estimates.items() if not isinstance(e, str)}
    for card in cards:
        row: dict[str, Any] = {"name": card.name, "memory_gb": card.memory_gb}
        needed: dict[str, int | None] = {}
        for method, key in _METHOD_KEYS:
            est = estimates[method]
            if isinstance(est, str):
                row[f"{key}_batch"] = None
                continue
            row[f"{key}_batch"] = max_batch(spec, settings, method, card)
            needed[key] = cards_needed(ones[method], card)
        row["cards_needed_at_batch_1"] = needed
        rows.append(row)
    return rows


def memory_report(spec: ModelSpec, settings: MemorySettings | None = None, *, cards: tuple[Card, ...] = DEFAULT_CARDS,
                  run: RunShape | None = None, cost_card: Card | None = None, strict: bool = True) -> dict[str, Any]:
    """Memory per method, the selected method's terms, batch per card and the cost, as JSON.

    With `strict`, a selected method the model cannot run (a LoRA target it lacks) raises
    MemorySettingsError; otherwise that method is reported as `{"method", "error"}`.
    """
    settings = settings or MemorySettings()
    run = run or RunShape()
    estimates = _estimates(spec, settings, strict)
    seq_len = settings.resolved_seq_len(spec.max_position_embeddings)
    serve = estimates["serve"]

    def peak(method: str) -> float | None:
        est = estimates[method]
        return None if isinstance(est, str) else _gb(est.peak_bytes)

    memory_gb = {
        "full_finetune": peak("full"),
        "lora": peak("lora"),
        "qlora": peak("qlora"),
        "serve_weights": None if isinstance(serve, str) else _gb(serve.term("weights")),
        "kv_cache": None if isinstance(serve, str) else _gb(serve.term("kv_cache")),
    }
    selected = estimates[settings.method]
    report: dict[str, Any] = {
        "settings": {**settings.to_json(), "seq_len": seq_len},
        "memory_gb": memory_gb,
        "selected": ({"method": settings.method, "error": selected} if isinstance(selected, str)
                     else selected.to_json()),
        "methods": {m: ({"error": e} if isinstance(e, str) else e.to_json()) for m, e in estimates.items()},
        "cards": _card_rows(spec, settings, cards, estimates),
        "cost": None if isinstance(selected, str) else _cost(spec, settings, selected, cards, run, cost_card),
        "assumptions": list(ASSUMPTIONS),
    }
    return report


def _cost(spec: ModelSpec, settings: MemorySettings, est: MemoryEstimate, cards: tuple[Card, ...],
          run: RunShape, cost_card: Card | None) -> dict[str, Any] | None:
    if est.method == "serve":
        return None
    options = [cost_card] if cost_card is not None else [c for c in cards if c.bf16_tflops > 0]
    best: dict[str, Any] | None = None
    for card in options:
        n = cards_needed(est, card)
        if n is None:
            continue
        cost = training_cost(spec, est.method, seq_len=est.seq_len, grad_checkpointing=settings.grad_checkpointing,
                             card=card, cards=n, run=run).to_json()
        rank = (cost["usd"] is None, cost["usd"] or 0.0, cost["hours"])
        if best is None or rank < best["_rank"]:
            best = {**cost, "_rank": rank}
    if best is None:
        return None
    best.pop("_rank")
    best["epochs"], best["samples"] = run.epochs, run.samples
    return best


def estimate_revision(analysis_or_config: Any, settings: MemorySettings | None = None, *,
                      manifest: Any = None, cards: tuple[Card, ...] = DEFAULT_CARDS) -> dict[str, Any]:
    """The JSON-able memory estimate of one revision: memory per method at `settings`, card fits, cost.

    Accepts an `Analysis` (anything with `.spec`), a `ModelSpec`, or a config dict (analysed with
    `hubwatch.estimator.analyze`, with the weight `manifest` when given). A method the model cannot
    run (e.g. LoRA targets it lacks) is reported as an error inside the result, not raised.
    """
    settings = settings or MemorySettings()
    if isinstance(analysis_or_config, ModelSpec):
        spec = analysis_or_config
    elif hasattr(analysis_or_config, "spec"):
        spec = analysis_or_config.spec
    else:
        from hubwatch.estimator import analyze  # config → Analysis

        spec = analyze(analysis_or_config, manifest=manifest).spec
    # Per revision nothing may stop the record: a method the model cannot run is reported, not raised.
    return memory_report(spec, settings, cards=cards, strict=False)


_LABELS = {
    "full_finetune": "Full fine-tune ({precision}, {optimizer})",
    "lora": "LoRA r={lora_rank}",
    "qlora": "QLoRA r={lora_rank}",
    "serve_weights": "Serving weights ({serve_dtype})",
    "kv_cache": "KV cache (batch {batch})",
}
_BATCH_KEY = {"full_finetune": "full_finetune_batch", "lora": "lora_batch", "qlora": "qlora_batch",
              "serve_weights": "serve_batch"}


def _card_label(row: dict[str, Any]) -> str:
    return f"{row.get('name')} {float(row.get('memory_gb', 0)):g} GB"


def memory_delta_summary(old: dict[str, Any], new: dict[str, Any], threshold_pct: float = 5) -> str | None:
    """Lines saying how memory moved between two `estimate_revision` results, or None when it did not.

    A method gets a line when its memory moved by at least `threshold_pct` percent or when a card
    it fitted (at batch 1) no longer fits, or the other way round.
    """
    old_mem, new_mem = old.get("memory_gb"), new.get("memory_gb")
    if not isinstance(old_mem, dict) or not isinstance(new_mem, dict):
        return None
    settings = new.get("settings") or {}
    values = {k: settings.get(k, "?") for k in ("precision", "optimizer", "lora_rank", "serve_dtype", "batch")}
    seq = settings.get("seq_len", "?")
    old_cards = {row.get("name"): row for row in old.get("cards") or [] if isinstance(row, dict)}
    lines = []
    for key, template in _LABELS.items():
        a, b = old_mem.get(key), new_mem.get(key)
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            continue
        moved = (abs(b - a) / a * 100 >= threshold_pct) if a > 0 else b > 0
        lost, gained = [], []
        batch_key = _BATCH_KEY.get(key)
        for row in new.get("cards") or []:
            if not isinstance(row, dict) or batch_key is None or row.get("name") not in old_cards:
                continue
            before, after = old_cards[row["name"]].get(batch_key), row.get(batch_key)
            if isinstance(before, int) and isinstance(after, int):
                if before >= 1 and after == 0:
                    lost.append(_card_label(row))
                elif before == 0 and after >= 1:
                    gained.append(_card_label(row))
        if not (moved or lost or gained):
            continue
        line = f"{template.format(**values)} at {seq} tokens: {a:.1f} → {b:.1f} GB"
        if lost:
            line += f"; no longer fits {', '.join(lost)}"
        if gained:
            line += f"; now fits {', '.join(gained)}"
        lines.append(line)
    return "\n".join(lines) or None
