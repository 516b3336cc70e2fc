"""Settings of the memory model (method, precision, optimizer, LoRA, sequence, batch), validated once."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

__all__ = [
    "ATTENTION_IMPLS",
    "KV_DTYPES",
    "IMPLEMENTATIONS",
    "LOSS_IMPLS",
    "METHODS",
    "OPTIMIZERS",
    "PRECISIONS",
    "SERVE_DTYPES",
    "MemorySettings",
    "MemorySettingsError",
]

METHODS = ("full", "lora", "qlora", "serve")
# amp-bf16: fp32 master weights and grads, bf16 autocast; bf16: everything bf16; fp32: everything fp32.
PRECISIONS = ("amp-bf16", "bf16", "fp32")
OPTIMIZERS = ("adamw", "adamw-8bit", "sgd")
SERVE_DTYPES = ("bf16", "int8", "int4")
KV_DTYPES = ("bf16", "fp8", "fp32")
ATTENTION_IMPLS = ("sdpa", "eager")
# fp32: transformers' loss (logits upcast to fp32 before cross-entropy);
# chunked: logits and loss kept in the compute dtype, computed in chunks (LitGPT, Unsloth-style).
LOSS_IMPLS = ("fp32", "chunked")
# Whose model code runs: transformers (+ PEFT), or LitGPT (fused qkv with one LoRA input for q/k/v,
# fused tanh-GELU, k/v expanded to every query head before SDPA).
IMPLEMENTATIONS = ("transformers", "litgpt")


class MemorySettingsError(ValueError):
    """A memory setting out of range; `name` is the setting, the message says what is allowed."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self.name = name
        self.problem = problem


@dataclass(frozen=True)
class MemorySettings:
    """What a memory estimate depends on besides the model; defaults follow the project's brief.

    `seq_len` None means 2048 or the model's context when that is shorter. `lora_targets` is
    ("all-linear",) for every linear layer but the output head, or module names / roles such as
    ("q_proj", "v_proj"); names are mapped across architectures (see `memory_roles`).
    """

    method: str = "lora"
    batch: int = 1
    seq_len: int | None = None
    lora_rank: int = 16
    lora_targets: tuple[str, ...] = ("all-linear",)
    precision: str = "amp-bf16"
    optimizer: str = "adamw"
    grad_checkpointing: bool = False
    attention: str = "sdpa"
    loss: str = "fp32"
    implementation: str = "transformers"
    serve_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    lora_dropout: float = 0.0  # > 0: each adapter keeps its dropped input and a 1-byte mask
    nf4_double_quant: bool = True  # QLoRA: absmax constants quantised again (8-bit + fp32 per 256)
    # QLoRA: bitsandbytes releases up to about 0.42 kept each 4-bit matmul's input for backward
    # (`ctx.tensors = (A, B)`); current releases keep only the packed weight.
    nf4_keeps_inputs: bool = False
    shards: int = 1  # FSDP full-shard / ZeRO-3 over this many cards: model states split, one layer gathered
    # Micro-batches per optimizer step. Above 1 the gradients of earlier micro-batches stay alive through
    # the next forward and backward (and under FSDP `no_sync` they accumulate unsharded, see `memory`).
    grad_accumulation: int = 1
    headroom: float = 1.15
    framework_overhead_gb: float = 0.5  # CUDA context and libraries: outside allocated memory

    def __post_init__(self) -> None:
        _one_of("method", self.method, METHODS)
        _one_of("precision", self.precision, PRECISIONS)
        _one_of("optimizer", self.optimizer, OPTIMIZERS)
        _one_of("serve_dtype", self.serve_dtype, SERVE_DTYPES)
        _one_of("kv_dtype", self.kv_dtype, KV_DTYPES)
        _one_of("attention", self.attention, ATTENTION_IMPLS)
        _one_of("loss", self.loss, LOSS_IMPLS)
        _one_of("implementation", self.implementation, IMPLEMENTATIONS)
        _whole("batch", self.batch, 1)
        if self.seq_len is not None:
            _whole("seq_len", self.seq_len, 1)
        _whole("lora_rank", self.lora_rank, 1)
        _whole("shards", self.shards, 1)
        _whole("grad_accumulation", self.grad_accumulation, 1)
        if isinstance(self.lora_dropout, bool) or not isinstance(self.lora_dropout, (int, float)) \
                or not 0 <= self.lora_dropout < 1:
            raise MemorySettingsError("lora_dropout", f"expected a probability in [0, 1), got {self.lora_dropout!r}")
        if not isinstance(self.lora_targets, tuple) or not self.lora_targets:
            raise MemorySettingsError("lora_targets", "give at least one target (or 'all-linear')")
        for target in self.lora_targets:
            if not isinstance(target, str) or not target.strip():
                raise MemorySettingsError("lora_targets", f"empty or non-text target {target!r}")
        for flag in ("grad_checkpointing", "nf4_double_quant", "nf4_keeps_inputs"):
            if not isinstance(getattr(self, flag), bool):
                raise MemorySettingsError(flag, "expected true or false")
        if not isinstance(self.headroom, (int, float)) or not 1.0 <= float(self.headroom) <= 10.0:
            raise MemorySettingsError("headroom", f"expected a factor between 1.0 and 10.0, got {self.headroom!r}")
        if not isinstance(self.framework_overhead_gb, (int, float)) or not 0 <= self.framework_overhead_gb <= 100:
            raise MemorySettingsError("framework_overhead_gb", f"expected 0–100 GB, got {self.framework_overhead_gb!r}")

    def with_(self, **changes: Any) -> MemorySettings:
        """A copy with some settings changed (validated again)."""
        return replace(self, **changes)

    def resolved_seq_len(self, max_position_embeddings: int | None) -> int:
        """The sequence length used: the setting, else 2048 capped by the model's context."""
        if self.seq_len is not None:
            return self.seq_len
        if max_position_embeddings is not None and 0 < max_position_embeddings < 2048:
            return max_position_embeddings
        return 2048

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MemorySettings:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise MemorySettingsError(unknown[0], f"unknown setting (known: {', '.join(sorted(known))})")
        values = dict(data)
        targets = values.get("lora_targets")
        if isinstance(targets, str):  # "q_proj,v_proj" as on the command line
            values["lora_targets"] = tuple(t.strip() for t in targets.split(",") if t.strip())
        elif isinstance(targets, list):
            values["lora_targets"] = tuple(targets)
        return cls(**values)


def _one_of(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise MemorySettingsError(name, f"unknown value {value!r} (choose one of: {', '.join(allowed)})")


def _whole(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemorySettingsError(name, f"expected a whole number, got {value!r}")
    if value < minimum:
        raise MemorySettingsError(name, f"must be at least {minimum}, got {value}")
    if value > 100_000_000:
        raise MemorySettingsError(name, f"{value} is beyond any real run (limit 100000000)")
