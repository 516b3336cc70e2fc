"""Settings of the memory model (method, precision, optimizer, LoRA, sequence, batch, training stack), validated once.

`stack` names the training stack (transformers' Trainer + PEFT, torchtune, Unsloth, LitGPT, Axolotl).
It decides what the user does not set: the loss path, whose model code runs, activation
checkpointing and activation offloading (`STACK_DEFAULTS`; the public source of each default is in
docs/estimator.md). `loss`, `implementation`, `grad_checkpointing` and `activation_offloading` left
at None follow the stack; `resolved()` fills them in.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from hubwatch.estimator.frozen import frozen, once

__all__ = [
    "ATTENTION_IMPLS",
    "KV_DTYPES",
    "IMPLEMENTATIONS",
    "LOSS_IMPLS",
    "METHODS",
    "OPTIMIZERS",
    "PRECISIONS",
    "SERVE_DTYPES",
    "STACKS",
    "STACK_DEFAULTS",
    "MemorySettings",
    "MemorySettingsError",
]

METHODS = ("full", "lora", "qlora", "serve")
# amp-bf16: fp32 master weights and grads, bf16 autocast; bf16: everything bf16; fp32: everything fp32.
PRECISIONS = ("amp-bf16", "bf16", "fp32")
# paged-*: bitsandbytes' PagedAdamW / PagedAdamW8bit, states in CUDA unified memory that the driver
# pages out to host memory under pressure (reported as host memory, outside the GPU peak).
OPTIMIZERS = ("adamw", "adamw-8bit", "sgd", "paged-adamw", "paged-adamw-8bit")
SERVE_DTYPES = ("bf16", "int8", "int4")
KV_DTYPES = ("bf16", "fp8", "fp32")
ATTENTION_IMPLS = ("sdpa", "eager")
# fp32: transformers' loss (logits upcast to fp32 before cross-entropy);
# chunked: logits and loss kept in the compute dtype, computed in chunks (LitGPT's chunked_cross_entropy);
# chunked-fp32: the output projection and an fp32 cross-entropy one chunk of tokens at a time
#   (torchtune's LinearCrossEntropyLoss / CEWithChunkedOutputLoss, 8 chunks);
# fused: projection, loss and its gradient fused chunk by chunk, no vocab-sized tensor per token kept
#   (Unsloth's fused cross-entropy, unsloth_zoo `unsloth_fused_ce_loss`);
# fp32-shifted: transformers' loss before labels were shifted instead of logits (up to 4.49,
#   `ForCausalLMLoss` / `LlamaForCausalLM.forward`: `shift_logits = logits[..., :-1, :].contiguous()`
#   of the fp32 logits), a second fp32 copy one position shorter (see memory_activations).
LOSS_IMPLS = ("fp32", "chunked", "chunked-fp32", "fused", "fp32-shifted")
# Whose model code runs: transformers (+ PEFT), or LitGPT (fused qkv with one LoRA input for q/k/v,
# fused tanh-GELU, k/v expanded to every query head before SDPA), or Unsloth's kernels (RMSNorm, LoRA
# QKV/O/MLP autograd functions that save less; see memory_activations).
IMPLEMENTATIONS = ("transformers", "litgpt", "unsloth")
STACKS = ("hf", "torchtune", "unsloth", "litgpt", "axolotl")
# What each stack does when the user says nothing: (loss, implementation, activation checkpointing,
# activation offloading). Sources: docs/estimator.md, "Training stacks".
STACK_DEFAULTS: dict[str, tuple[str, str, bool, bool]] = {
    "hf": ("fp32", "transformers", False, False),  # TrainingArguments.gradient_checkpointing=False
    "axolotl": ("fp32", "transformers", False, False),  # HF Trainer underneath; gradient_checkpointing off
    "torchtune": ("chunked-fp32", "transformers", True, False),  # recipes: enable_activation_checkpointing: True
    "unsloth": ("fused", "unsloth", True, True),  # use_gradient_checkpointing="unsloth" offloads to host
    "litgpt": ("chunked", "litgpt", False, False),  # finetune/*.py: no checkpointing on one device
}
# Stacks that offer activation offloading (torchtune `enable_activation_offloading`, Axolotl
# `activation_offloading`, Unsloth's offloaded checkpointing).
_OFFLOADING_STACKS = ("torchtune", "axolotl", "unsloth")

class MemorySettingsError(ValueError):
    """A memory setting out of range; `name` is the setting, the message says what is allowed."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self.name = name
        self.problem = problem


@frozen
class MemorySettings:
    """What a memory estimate depends on besides the model; defaults follow the project's brief.

    `seq_len` None means 2048 or the model's context when that is shorter. `lora_targets` is
    ("all-linear",) for every linear layer but the output head, or module names / roles such as
    ("q_proj", "v_proj"); names are mapped across architectures (see `memory/roles.py`).
    """

    method: str = "lora"
    batch: int = 1
    seq_len: int | None = None
    lora_rank: int = 16
    lora_targets: tuple[str, ...] = ("all-linear",)
    precision: str = "amp-bf16"
    optimizer: str = "adamw"
    grad_checkpointing: bool | None = None  # None: the stack's default
    attention: str = "sdpa"
    loss: str | None = None  # None: the stack's loss path
    implementation: str | None = None  # None: the stack's model code
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
    headroom: float = 1.15  # caching-allocator reserve and fragmentation above the allocated peak
    framework_overhead_gb: float = 0.5  # CUDA context and libraries: outside allocated memory
    stack: str = "hf"
    # Layer inputs kept for backward moved to host memory and fetched back in backward (None: the stack's).
    activation_offloading: bool | None = None
    # torchtune `optimizer_in_bwd`: each parameter steps in its gradient hook and its gradient is freed
    # at once, so a full fine-tune never holds every gradient (torchtune full-finetune recipes only).
    optimizer_in_backward: bool = False
    # torch.compile of the layers and the loss (torchtune `compile: True`, `training.compile_model` /
    # `compile_loss`): the compiled cross-entropy keeps its input and the log-sum-exp, not the
    # log-softmax (see memory_activations.logits_bytes_per_token).
    compile: bool = False

    # The effective_* figures below are worked out on first use and kept (`once`): the settings are frozen, and
    # one report asks each of them of the same settings object for every method.

    def __post_init__(self) -> None:
        _one_of("stack", self.stack, STACKS)
        _one_of("method", self.method, METHODS)
        _one_of("precision", self.precision, PRECISIONS)
        _one_of("optimizer", self.optimizer, OPTIMIZERS)
        _one_of("serve_dtype", self.serve_dtype, SERVE_DTYPES)
        _one_of("kv_dtype", self.kv_dtype, KV_DTYPES)
        _one_of("attention", self.attention, ATTENTION_IMPLS)
        if self.loss is not None:
            _one_of("loss", self.loss, LOSS_IMPLS)
        if self.implementation is not None:
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
        for flag in ("nf4_double_quant", "nf4_keeps_inputs", "optimizer_in_backward", "compile"):
            if not isinstance(getattr(self, flag), bool):
                raise MemorySettingsError(flag, "expected true or false")
        for flag in ("grad_checkpointing", "activation_offloading"):
            if getattr(self, flag) is not None and not isinstance(getattr(self, flag), bool):
                raise MemorySettingsError(flag, "expected true, false or unset (the stack's default)")
        if self.optimizer_in_backward and self.stack != "torchtune":
            raise MemorySettingsError("optimizer_in_backward", f"torchtune's option (`optimizer_in_bwd`), not one "
                                      f"of {self.stack}; set stack=torchtune or turn it off")
        if self.optimizer_in_backward and self.grad_accumulation > 1:
            raise MemorySettingsError("optimizer_in_backward", "steps in backward cannot accumulate gradients "
                                      "(torchtune refuses it); set grad_accumulation=1 or turn it off")
        if self.activation_offloading and self.stack not in _OFFLOADING_STACKS:
            raise MemorySettingsError("activation_offloading", f"{self.stack} has no activation offloading "
                                      f"(stacks that do: {', '.join(_OFFLOADING_STACKS)})")
        if not isinstance(self.headroom, (int, float)) or not 1.0 <= float(self.headroom) <= 10.0:
            raise MemorySettingsError("headroom", f"expected a factor between 1.0 and 10.0, got {self.headroom!r}")
        if not isinstance(self.framework_overhead_gb, (int, float)) or not 0 <= self.framework_overhead_gb <= 100:
            raise MemorySettingsError("framework_overhead_gb", f"expected 0–100 GB, got {self.framework_overhead_gb!r}")

    @once
    def effective_loss(self) -> str:
        """The loss path: the setting, else the stack's."""
        return self.loss if self.loss is not None else STACK_DEFAULTS[self.stack][0]

    @once
    def effective_implementation(self) -> str:
        return self.implementation if self.implementation is not None else STACK_DEFAULTS[self.stack][1]

    @once
    def effective_checkpointing(self) -> bool:
        return self.grad_checkpointing if self.grad_checkpointing is not None else STACK_DEFAULTS[self.stack][2]

    @once
    def effective_offloading(self) -> bool:
        return self.activation_offloading if self.activation_offloading is not None else STACK_DEFAULTS[self.stack][3]

    @once
    def paged_optimizer(self) -> bool:
        """States in unified memory that may live in host memory (bitsandbytes' paged optimizers)."""
        return self.optimizer.startswith("paged-")

    def resolved(self) -> MemorySettings:
        """A copy with every setting left to the stack filled in (what the estimate used)."""
        return replace(self, loss=self.effective_loss, implementation=self.effective_implementation,
                       grad_checkpointing=self.effective_checkpointing, activation_offloading=self.effective_offloading)

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
