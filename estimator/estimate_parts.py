"""The typed parts of an estimate: parameters, structure, one method's memory, peaks, card fits and cost.

Each part reads and writes the JSON the store keeps (`to_json` / `from_json`). Reading is
tolerant, as stored estimates come from older estimator versions: a missing or oddly typed
figure reads as None (or the part as a whole as None), never as an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hubwatch.estimator.frozen import frozen
from hubwatch.estimator.lints import Finding
from hubwatch.estimator.memory.peak import MemoryEstimate
from hubwatch.estimator.rounding import gb
from hubwatch.estimator.support import Support

__all__ = ["CARD_METHODS", "CardFit", "Cost", "MethodError", "MethodMemory", "Params", "PeakMemory",
           "StructureSummary", "finding_from_json", "json_float", "json_int", "json_str"]

# Methods in display order, with the stem of their JSON keys (`<stem>_batch` in card rows).
CARD_METHODS: tuple[tuple[str, str], ...] = (("full", "full_finetune"), ("lora", "lora"), ("qlora", "qlora"),
                                             ("serve", "serve"))


def json_float(value: Any) -> float | None:
    """A JSON number as a float (None for anything else, booleans included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def json_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def json_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _figures(data: Any) -> tuple[tuple[str, float], ...]:
    if not isinstance(data, Mapping):
        return ()
    return tuple((str(k), v) for k, raw in data.items() if (v := json_float(raw)) is not None)


def finding_from_json(data: Any) -> Finding | None:
    if not isinstance(data, Mapping):
        return None
    parts = [json_str(data.get(k)) for k in ("rule", "level", "message", "fix")]
    rule, level, message, fix = parts
    if rule is None or level is None or message is None:
        return None
    return Finding(rule, level, message, fix or "")


@frozen
class Params:
    """Parameters: derived from the config, counted in the checkpoint, active per token, by component."""

    derived: int | None
    checkpoint: int | None = None
    delta_pct: float | None = None
    active: int | None = None
    by_component: tuple[tuple[str, int], ...] = ()
    explanation: str = ""
    support: Support | None = None  # None: stored by an estimator before 1.2

    def to_json(self) -> dict[str, Any]:
        return {"derived": self.derived, "checkpoint": self.checkpoint, "delta_pct": self.delta_pct,
                "active": self.active, "by_component": dict(self.by_component), "explanation": self.explanation,
                "support": None if self.support is None else self.support.to_json()}

    @classmethod
    def from_json(cls, data: Any) -> Params | None:
        if not isinstance(data, Mapping):
            return None
        components = data.get("by_component")
        by_component = tuple((str(k), v) for k, raw in components.items() if (v := json_int(raw)) is not None) \
            if isinstance(components, Mapping) else ()
        return cls(json_int(data.get("derived")), json_int(data.get("checkpoint")), json_float(data.get("delta_pct")),
                   json_int(data.get("active")), by_component, json_str(data.get("explanation")) or "",
                   Support.from_json(data.get("support")))


@frozen
class StructureSummary:
    """What the stored estimate keeps of the structure: layer count and whether a forward pass works."""

    layers: int | None
    forward_pass_ok: bool | None
    failures: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"layers": self.layers, "forward_pass_ok": self.forward_pass_ok, "failures": list(self.failures)}

    @classmethod
    def from_json(cls, data: Any) -> StructureSummary | None:
        if not isinstance(data, Mapping):
            return None
        ok = data.get("forward_pass_ok")
        failures = data.get("failures")
        return cls(json_int(data.get("layers")), ok if isinstance(ok, bool) else None,
                   tuple(f for f in failures if isinstance(f, str)) if isinstance(failures, list) else ())


@frozen
class MethodMemory:
    """One method's memory at the estimate's settings, in decimal GB: peak, fit figure and terms."""

    method: str
    seq_len: int
    batch: int
    peak_gb: float
    required_gb: float
    terms: tuple[tuple[str, float], ...]
    moment: str
    moments: tuple[tuple[str, float], ...]
    trainable_params: int
    framework_overhead_gb: float
    headroom: float
    host_gb: float = 0.0  # paged optimizer states and offloaded activations (host memory, not in the peak)

    @classmethod
    def of(cls, est: MemoryEstimate) -> MethodMemory:
        """`est` in decimal GB, each figure rounded to three decimals (`rounding.gb`; a zero term, a third of
        them, is `gb`'s own zero, `v / 1e9`, without the call)."""
        host = est.host_bytes
        return cls(est.method, est.seq_len, est.batch, gb(est.peak_bytes), gb(est.required_bytes),
                   tuple([(n, gb(v) if v else v / 1e9) for n, v in est.terms]), est.moment,
                   tuple([(n, gb(v)) for n, v in est.moments]), est.trainable_params,
                   gb(est.framework_overhead_bytes), est.headroom, gb(host) if host else host / 1e9)

    def term(self, name: str) -> float:
        return dict(self.terms).get(name, 0.0)

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "seq_len": self.seq_len, "batch": self.batch, "peak_gb": self.peak_gb,
                "required_gb": self.required_gb, "terms": dict(self.terms), "moment": self.moment,
                "moments_gb": dict(self.moments), "trainable_params": self.trainable_params,
                "framework_overhead_gb": self.framework_overhead_gb, "headroom": self.headroom,
                "host_gb": self.host_gb}

    @classmethod
    def from_json(cls, method: str, data: Any) -> MethodMemory | MethodError | None:
        if not isinstance(data, Mapping):
            return None
        if isinstance(data.get("error"), str):
            return MethodError(method, data["error"])
        ints = [json_int(data.get(k)) for k in ("seq_len", "batch", "trainable_params")]
        floats = [json_float(data.get(k)) for k in ("peak_gb", "required_gb", "framework_overhead_gb", "headroom")]
        moment = json_str(data.get("moment"))
        seq_len, batch, trainable = ints
        peak, required, overhead, headroom = floats
        if (seq_len is None or batch is None or trainable is None or peak is None or required is None
                or overhead is None or headroom is None or moment is None):
            return None
        return cls(method, seq_len, batch, peak, required, _figures(data.get("terms")), moment,
                   _figures(data.get("moments_gb")), trainable, overhead, headroom,
                   json_float(data.get("host_gb")) or 0.0)


@frozen
class MethodError:
    """A method the model cannot run at the settings (e.g. LoRA targets it lacks), and why."""

    method: str
    error: str


@frozen
class PeakMemory:
    """The headline figures in decimal GB: peak per training method, serving weights and KV cache."""

    full_finetune: float | None = None
    lora: float | None = None
    qlora: float | None = None
    serve_weights: float | None = None
    kv_cache: float | None = None

    KEYS = ("full_finetune", "lora", "qlora", "serve_weights", "kv_cache")

    def items(self) -> tuple[tuple[str, float | None], ...]:
        return tuple((k, getattr(self, k)) for k in self.KEYS)

    def to_json(self) -> dict[str, Any]:
        return dict(self.items())

    @classmethod
    def from_json(cls, data: Any) -> PeakMemory:
        if not isinstance(data, Mapping):
            return cls()
        return cls(*(json_float(data.get(k)) for k in cls.KEYS))


@frozen
class CardFit:
    """One card: the largest batch per method (0: batch 1 does not fit; None: the method cannot run)
    and the cards a pipeline split needs at batch 1."""

    name: str
    memory_gb: float | None
    batches: tuple[tuple[str, int | None], ...]  # (method, largest batch), methods as in CARD_METHODS
    cards_needed: tuple[tuple[str, int | None], ...] = ()  # (method, cards at batch 1; None beyond the cap)

    @property
    def label(self) -> str:
        return f"{self.name} {float(self.memory_gb or 0):g} GB"

    def batch(self, method: str) -> int | None:
        return dict(self.batches).get(method)

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"name": self.name, "memory_gb": self.memory_gb}
        stems = dict(CARD_METHODS)
        for method, batch in self.batches:
            row[f"{stems.get(method, method)}_batch"] = batch
        row["cards_needed_at_batch_1"] = {stems.get(m, m): n for m, n in self.cards_needed}
        return row

    @classmethod
    def from_json(cls, data: Any) -> CardFit | None:
        if not isinstance(data, Mapping) or not isinstance(data.get("name"), str):
            return None
        batches = tuple((method, json_int(data.get(f"{stem}_batch"))) for method, stem in CARD_METHODS
                        if f"{stem}_batch" in data)
        needed = data.get("cards_needed_at_batch_1")
        cards_needed = tuple((method, json_int(needed.get(stem))) for method, stem in CARD_METHODS
                             if stem in needed) if isinstance(needed, Mapping) else ()
        return cls(data["name"], json_float(data.get("memory_gb")), batches, cards_needed)


@frozen
class Cost:
    """The roofline cost of one training run of the selected method on the cheapest card that fits."""

    method: str
    card: str
    cards: int
    tokens: float
    flops: float
    hours: float
    usd: float | None
    usd_per_card_hour: float | None
    price_table_date: str
    utilisation: float
    epochs: float
    samples: int
    tokens_per_sample: int | None = None  # an estimate from a dataset's metadata (None: the sequence length)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method, "card": self.card, "cards": self.cards, "tokens": self.tokens,
               "flops": self.flops, "hours": self.hours, "usd": self.usd, "usd_per_card_hour": self.usd_per_card_hour,
               "price_table_date": self.price_table_date, "utilisation": self.utilisation, "epochs": self.epochs,
               "samples": self.samples}
        if self.tokens_per_sample is not None:  # absent otherwise: estimates stored before it read alike
            out["tokens_per_sample"] = self.tokens_per_sample
        return out

    @classmethod
    def from_json(cls, data: Any) -> Cost | None:
        if not isinstance(data, Mapping):
            return None
        method, card, date = (json_str(data.get(k)) for k in ("method", "card", "price_table_date"))
        cards, samples = json_int(data.get("cards")), json_int(data.get("samples"))
        tokens, flops, hours, utilisation, epochs = (json_float(data.get(k)) for k in
                                                     ("tokens", "flops", "hours", "utilisation", "epochs"))
        if (method is None or card is None or date is None or cards is None or samples is None or tokens is None
                or flops is None or hours is None or utilisation is None or epochs is None):
            return None
        return cls(method, card, cards, tokens, flops, hours, json_float(data.get("usd")),
                   json_float(data.get("usd_per_card_hour")), date, utilisation, epochs, samples,
                   json_int(data.get("tokens_per_sample")))
