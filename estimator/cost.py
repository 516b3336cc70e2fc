"""Roofline cost of one training run: FLOPs (attention included), hours at a stated utilisation, money.

FLOPs per token of a forward pass: 2 × the active matrix parameters (embedding lookups are free;
the output head counts even when tied), plus causal attention a·s·(d_qk + d_v) per layer (each
token attends to s/2 positions on average, 2 FLOPs a multiply-add, for QKᵀ and for AV).
A training step costs 3 forward passes for a full fine-tune (backward computes input and weight
gradients), 2 for LoRA/QLoRA (frozen weights need no weight gradient; the adapters are
negligible), and one forward pass more with gradient checkpointing. Time = FLOPs / (cards ×
peak × utilisation).

Tokens per sample are the sequence length, or, when a dataset's metadata estimates them
(`RunShape.tokens_per_sample`, estimator/dataset_size.py), that estimate capped at the sequence
length: a sample attends to its own tokens, and batches are assumed packed or grouped by length
(batches padded to the sequence length cost as at the sequence length). Memory stays at the
sequence length either way.
"""

from __future__ import annotations


from hubwatch.estimator.cards import Card
from hubwatch.estimator.frozen import frozen
from hubwatch.estimator.memory.activations import training_stacks
from hubwatch.estimator.memory.settings import MemorySettingsError
from hubwatch.estimator.params.spec import ModelSpec

__all__ = ["PRICE_TABLE_DATE", "CostEstimate", "RunShape", "forward_flops_per_token", "run_flops", "run_hours",
           "training_cost"]

# The date the default card prices (cards.DEFAULT_CARDS) were set; they are indicative, not quotes.
PRICE_TABLE_DATE = "2026-11-01"


@frozen
class RunShape:
    """How much data one run sees; tokens per sample defaults to the sequence length (an estimate from a
    dataset's metadata, when given, is capped at it)."""

    epochs: float = 1.0
    samples: int = 10_000
    utilisation: float = 0.4  # model FLOPs utilisation; 0.3–0.5 is typical for fine-tuning
    tokens_per_sample: int | None = None

    def sample_tokens(self, seq_len: int) -> int:
        """Tokens one sample costs at context `seq_len`."""
        return seq_len if self.tokens_per_sample is None else min(seq_len, self.tokens_per_sample)

    def __post_init__(self) -> None:
        if not 0 < self.epochs <= 10_000:
            raise MemorySettingsError("epochs", f"expected 0 < epochs ≤ 10000, got {self.epochs}")
        if isinstance(self.samples, bool) or not isinstance(self.samples, int) or self.samples < 1:
            raise MemorySettingsError("samples", f"expected a whole number ≥ 1, got {self.samples!r}")
        if not 0 < self.utilisation <= 1:
            raise MemorySettingsError("utilisation", f"expected 0 < utilisation ≤ 1, got {self.utilisation}")
        per_sample = self.tokens_per_sample
        if per_sample is not None and (isinstance(per_sample, bool) or not isinstance(per_sample, int) or per_sample < 1):
            raise MemorySettingsError("tokens_per_sample", f"expected a whole number ≥ 1, got {per_sample!r}")


@frozen
class CostEstimate:
    """One run costed: the method, the card and how many, tokens, FLOPs, hours and dollars at the utilisation."""

    method: str
    card: str
    cards: int
    tokens: float
    flops: float
    hours: float
    usd: float | None
    usd_per_card_hour: float | None
    utilisation: float

    def to_json(self) -> dict[str, object]:
        return {
            "method": self.method,
            "card": self.card,
            "cards": self.cards,
            "tokens": self.tokens,
            "flops": self.flops,
            "hours": round(self.hours, 3),
            "usd": None if self.usd is None else round(self.usd, 2),
            "usd_per_card_hour": self.usd_per_card_hour,
            "price_table_date": PRICE_TABLE_DATE,
            "utilisation": self.utilisation,
        }


def forward_flops_per_token(spec: ModelSpec, seq_len: int) -> float:
    """FLOPs of one token's forward pass at context `seq_len` (see the module doc)."""
    head = spec.lm_head_params or (spec.vocab_size * spec.text_stack.hidden_size if spec.tie_word_embeddings else 0)
    matrices = max(0, spec.active_params - spec.embedding_params - spec.lm_head_params) + head
    # Per layer heads · context · (d_qk + d_v), a whole number: summed exactly and converted once, which is
    # the float the layer-by-layer sum gives while every partial sum is below 2^53 (else it is summed so).
    exact = 0
    for stack in training_stacks(spec):
        att = stack.attention
        kinds = att.layer_types[: stack.num_layers] if att.layer_types else ("full",) * stack.num_layers
        sliding, none = kinds.count("sliding"), kinds.count("none")
        window = min(seq_len, att.sliding_window or seq_len)
        width = att.head_dim + (att.v_head_dim or att.head_dim)
        full_part, sliding_part = att.num_heads * seq_len * width, att.num_heads * window * width
        if full_part < 0 or sliding_part < 0:
            exact = -1
            break
        exact += (len(kinds) - sliding - none) * full_part + sliding * sliding_part
    if 0 <= exact < 2 ** 53:
        return 2.0 * matrices + float(exact)
    attention = 0.0
    for stack in training_stacks(spec):
        att = stack.attention
        d_v = att.v_head_dim or att.head_dim
        kinds = att.layer_types or ("full",) * stack.num_layers
        for kind in kinds[: stack.num_layers]:
            if kind == "none":
                continue
            context = min(seq_len, att.sliding_window or seq_len) if kind == "sliding" else seq_len
            attention += att.num_heads * context * (att.head_dim + d_v)
    return 2.0 * matrices + attention


def training_cost(spec: ModelSpec, method: str, *, seq_len: int, grad_checkpointing: bool, card: Card,
                  cards: int, run: RunShape, flops_per_token: float | None = None) -> CostEstimate:
    """Hours and money of one training run of `method` on `cards` × `card` (`flops_per_token`, when
    given, is `forward_flops_per_token(spec, seq_len)` computed once for many cards)."""
    if method == "serve":
        raise MemorySettingsError("method", "cost is estimated for training runs (full, lora, qlora), not serve")
    if card.bf16_tflops <= 0:
        raise MemorySettingsError("card", f"{card.name} has no known peak throughput to cost a run on")
    tokens, flops = run_flops(spec, method, seq_len=seq_len, grad_checkpointing=grad_checkpointing, run=run,
                              flops_per_token=flops_per_token)
    hours, usd = run_hours(flops, card, cards, run)
    return CostEstimate(method, card.name, cards, tokens, flops, hours, usd, card.usd_per_hour or None,
                        run.utilisation)


def run_flops(spec: ModelSpec, method: str, *, seq_len: int, grad_checkpointing: bool, run: RunShape,
              flops_per_token: float | None = None) -> tuple[float, float]:
    """(tokens, FLOPs) of one training run of `method`, the same on every card (see the module doc;
    `flops_per_token`, when given, is at the run's tokens per sample)."""
    if method == "serve":
        raise MemorySettingsError("method", "cost is estimated for training runs (full, lora, qlora), not serve")
    passes = (3.0 if method == "full" else 2.0) + (1.0 if grad_checkpointing else 0.0)
    per_sample = run.sample_tokens(seq_len)
    tokens = run.epochs * run.samples * per_sample
    per_token = forward_flops_per_token(spec, per_sample) if flops_per_token is None else flops_per_token
    return tokens, passes * per_token * tokens


def run_hours(flops: float, card: Card, cards: int, run: RunShape) -> tuple[float, float | None]:
    """(hours, USD or None without a price) of `flops` on `cards` × `card` (a card with a known peak)."""
    seconds = flops / (cards * card.bf16_tflops * 1e12 * run.utilisation)
    hours = seconds / 3600
    price = card.usd_per_hour or None
    return hours, (hours * cards * price if price is not None else None)
