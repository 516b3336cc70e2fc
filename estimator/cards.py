"""Accelerator cards and what fits on them: the largest batch per method, and cards needed at batch 1.

A run fits a card when `peak × headroom + framework overhead ≤ card memory` (see `MemoryEstimate.
required_bytes`). Memory is the card's nominal size in decimal GB (16 GB = 16e9 bytes), which is
slightly conservative for cards sized in GiB. Peak throughput and prices are used by `cost`.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from functools import lru_cache
from hubwatch.estimator.frozen import frozen, once
from hubwatch.estimator.memory.peak import MemoryEstimate, MemoryModel, memory_model
from hubwatch.estimator.memory.settings import MemorySettings, MemorySettingsError
from hubwatch.estimator.params.spec import ModelSpec

__all__ = ["BATCH_CAP", "DEFAULT_CARDS", "BatchFit", "Card", "card_by_name", "cards_needed", "cards_needed_many", "fits",
           "max_batch", "max_batch_of", "parse_cards"]

BATCH_CAP = 4096  # the batch search stops here; a result equal to it means "at least this"
# Relative error allowed for a batch solved from the lines before the real figures are asked (see
# `BatchFit.largest_many`): some million times the rounding of a sum of a few doubles.
_SLACK = 1e-9
_COUNTS = 2.0 ** 40  # a split suggested beyond this many cards (or none: NaN) is searched from the end


@frozen
class Card:
    """One accelerator: nominal memory, dense bf16 peak (fp16 for T4), indicative on-demand price."""

    name: str
    memory_gb: float
    bf16_tflops: float
    usd_per_hour: float

    @once
    def memory_bytes(self) -> float:  # the card is frozen: computed once
        return self.memory_gb * 1e9

    @property
    def label(self) -> str:
        return f"{self.name} {self.memory_gb:g} GB"


# Dense tensor-core peaks from the vendors' data sheets; prices are indicative on-demand cloud
# prices per card-hour (see cost.PRICE_TABLE_DATE) — override them with `--price NAME=USD`.
DEFAULT_CARDS: tuple[Card, ...] = (
    Card("T4", 16, 65, 0.35),
    Card("L4", 24, 121, 0.80),
    Card("A10G", 24, 70, 1.01),
    Card("A100-40GB", 40, 312, 1.80),
    Card("A100-80GB", 80, 312, 2.20),
    Card("H100-80GB", 80, 989, 3.00),
    Card("H200", 141, 989, 3.80),
    Card("B200", 180, 2250, 5.50),
    Card("MI300X", 192, 1307, 3.50),
)

_ALIASES = {"A100": "A100-80GB", "A100-40": "A100-40GB", "A100-80": "A100-80GB", "H100": "H100-80GB",
            "H100-80": "H100-80GB"}


def card_by_name(name: str, cards: tuple[Card, ...] = DEFAULT_CARDS) -> Card:
    """The card called `name` (case-insensitive; A100/H100 aliases accepted)."""
    key = name.strip().upper()
    key = _ALIASES.get(key, key)
    for card in cards:
        if card.name.upper() == key:
            return card
    raise MemorySettingsError("card", f"unknown card {name!r} (known: {', '.join(c.name for c in cards)})")


def parse_cards(spec: str, cards: tuple[Card, ...] = DEFAULT_CARDS) -> tuple[Card, ...]:
    """Cards from a comma-separated list of names, or `NAME:GB` for a custom card (no price)."""
    out: list[Card] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if ":" in part:
            name, _, size = part.partition(":")
            try:
                gb = float(size)
            except ValueError:
                raise MemorySettingsError("card", f"{part!r}: expected NAME:GB, e.g. MYCARD:48") from None
            if not 0 < gb <= 100_000 or not name.strip():
                raise MemorySettingsError("card", f"{part!r}: expected NAME:GB with 0 < GB ≤ 100000")
            out.append(Card(name.strip(), gb, 0.0, 0.0))
        else:
            out.append(card_by_name(part, cards))
    if not out:
        raise MemorySettingsError("cards", "give at least one card")
    return tuple(out)


def fits(estimate: MemoryEstimate, card: Card) -> bool:
    return estimate.required_bytes <= card.memory_bytes


def max_batch(spec: ModelSpec, settings: MemorySettings, method: str, card: Card, cap: int = BATCH_CAP) -> int:
    """The largest batch (at the settings' sequence length) that fits `card`; 0 when batch 1 does not."""
    return max_batch_of(memory_model(spec, settings, method), card, cap)


def max_batch_of(model: MemoryModel, card: Card, cap: int = BATCH_CAP) -> int:
    """The largest batch of `model` (one method's memory, batch left open) that fits `card`; 0 when
    batch 1 does not.

    Every term is affine in the batch (`memory_model`), so each peak moment's total is c + k·batch
    and the fit is `max over moments ≤ limit`: solve each moment for the largest batch from batches 1
    and 2, take the smallest, then confirm it and its neighbour with the real figures (floating-point
    rounding can put the solution one off), so the answer is the largest batch that fits exactly.
    """
    return BatchFit(model).largest(card.memory_bytes, cap)


class BatchFit:
    """`max_batch_of` for one model on many cards: the figures at batches 1 and 2 made once."""

    def __init__(self, model: MemoryModel, one: MemoryEstimate | None = None) -> None:
        """`one`, when given, is `model.at(1)` already made (its moments are `model.totals(1)`)."""
        self.model = model
        if one is None:
            totals = model.totals(1)
            one_required = max(total for _, total in totals) * model.headroom + model.framework_overhead_bytes
        else:
            totals, one_required = one.moments, one.required_bytes  # the same floats
        self.one_required = one_required
        # Each growing moment as (its total at batch 0, its growth per sequence); the moments come in one
        # order at every batch. For the slack (`largest_many`): the largest |base| + k, and the largest
        # _SLACK / k (that of the smallest k).
        lines: list[tuple[float, float]] = []
        spread, least = 0.0, math.inf  # (no lines: no slack is asked)
        for (_, t1), (_, t2) in zip(totals, model.totals(2)):
            k = t2 - t1
            if k > 0:
                lines.append((t1 - k, k))
                spread = max(spread, abs(t1 - k) + k)
                least = min(least, k)
        self.lines = tuple(lines)
        self.spread, self.per_k = spread, _SLACK / least

    def largest_many(self, sizes: tuple[float, ...], cap: int = BATCH_CAP) -> tuple[int, ...]:
        """`largest` for each card memory in `sizes` (bytes).

        The solution from the lines is taken as it is when it is certain. Each line's solution b is
        known to within `_SLACK × (|limit| + |base| + k) × (|b| + 2) / k` batches (a bound far above
        the rounding of the lines, made from two totals, and of the real figure at any batch up to
        b), which is at most `grain × (|b| + 2)` with `grain = (|limit| + spread) × per_k` (the
        largest |base| + k and _SLACK / k over the lines). While grain < 1, `b − grain × (|b| + 2)`
        grows with b, so the smallest real solution lies within `grain × (|best| + 2)` of the
        smallest solution from the lines, `best`; when no whole batch lies that close to it, its
        floor is the answer the real figures give (a moment that does not grow from batch 1 to 2 has
        no per-token term, so it fits at every batch once batch 1 fits). Otherwise, and when no
        moment grows, the real figures decide.
        """
        model = self.model
        required = model.required_at  # fits(model.at(batch), card) is required_at(batch) <= memory
        overhead, headroom = model.framework_overhead_bytes, model.headroom
        one_required, lines, ceiling = self.one_required, self.lines, float(cap)
        spread, per_k = self.spread, self.per_k
        out = []
        for memory_bytes in sizes:
            if one_required > memory_bytes:
                out.append(0)
                continue
            limit = (memory_bytes - overhead) / headroom
            best = ceiling
            if lines:
                best = math.inf
                for base, k in lines:  # the smallest solution (the first of equals, as `min` keeps)
                    solved = (limit - base) / k
                    if solved < best:
                        best = solved
                grain = (abs(limit) + spread) * per_k
                error = grain * (abs(best) + 2.0)
                low = best - error
                if grain < 1.0:
                    if low >= ceiling:
                        out.append(cap)
                        continue
                    batch = int(low)
                    if low >= 1.0 and batch == int(best + error):
                        out.append(batch)
                        continue
                best = min(ceiling, best)
            # The real figures, from the smallest solution.
            batch = max(1, min(cap, int(best)))
            while batch > 1 and required(batch) > memory_bytes:
                batch -= 1
            while batch < cap and required(batch + 1) <= memory_bytes:
                batch += 1
            out.append(batch)
        return tuple(out)

    def largest(self, memory_bytes: float, cap: int = BATCH_CAP) -> int:
        """The largest batch that fits a card of `memory_bytes` (see `max_batch_of`)."""
        return self.largest_many((memory_bytes,), cap)[0]


def cards_needed(estimate: MemoryEstimate, card: Card, max_cards: int = 1024) -> int | None:
    """Cards of this kind a pipeline split needs for `estimate` (1 when it fits; None beyond max_cards).

    Stages split weights, gradients, states, activations and KV cache evenly; the logits and the
    framework overhead are not split (the last stage holds the logits; every card has a context).
    """
    return cards_needed_many(estimate, (card.memory_bytes,), max_cards)[0]


def cards_needed_many(estimate: MemoryEstimate, memory_sizes: tuple[float, ...], max_cards: int = 1024
                      ) -> list[int | None]:
    """`cards_needed` of `estimate` on cards of each of `memory_sizes` (bytes), its figures read once."""
    required = estimate.required_bytes
    logits = estimate.term("logits")
    splittable = estimate.peak_bytes - logits
    overhead, headroom = estimate.framework_overhead_bytes, estimate.headroom
    steps = _split_steps(max_cards)
    last = len(steps)
    out: list[int | None] = []
    for memory_bytes in memory_sizes:
        if required <= memory_bytes:  # it fits (`fits`)
            out.append(1)
            continue
        per_card = memory_bytes - overhead - logits * headroom
        if per_card <= 0:
            out.append(None)
            continue
        # The first count that fits: fitting is monotone in the count (each card's share only falls), so
        # from the count the division suggests, stepping back while the one before fits and on while this
        # one does not finds the first the scan in order finds.
        suggested = splittable * headroom / per_card  # the count were the shares exact
        i = bisect_left(steps, suggested) if suggested < _COUNTS else last
        while i < last and not (splittable / steps[i]) * headroom <= per_card:
            i += 1
        while i > 0 and (splittable / steps[i - 1]) * headroom <= per_card:
            i -= 1
        out.append(steps[i] if i < last and (splittable / steps[i]) * headroom <= per_card else None)
    return out


@lru_cache(maxsize=16)
def _split_steps(max_cards: int) -> tuple[int, ...]:
    """The card counts a split is tried at, in order: 2 to 16 one by one, then a quarter more each time."""
    out: list[int] = []
    n = 2
    while n <= max_cards:
        out.append(n)
        n += 1 if n < 16 else n // 4
    return tuple(out)
