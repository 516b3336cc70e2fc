"""Peak memory of a full fine-tune, LoRA, QLoRA or serving run, term by term, from a ModelSpec.

A training step has three moments that can be the peak; the estimate takes the largest:
- `loss`: weights + optimizer states + all saved activations + the logits/loss peak;
- `head backward`: as above with the output head's gradient and the logits kept through backward;
- `optimizer step`: weights + states + every gradient + the optimizer's temporaries.
Terms are the bytes alive at the peak moment, so they add up to the peak. `peak_bytes` is
allocated memory (what `torch.cuda.max_memory_allocated` reports), without headroom; the CUDA
context (`framework_overhead_gb`) and the headroom factor count only in `required_bytes`, which
fit decisions use.

The training stack (`settings.stack`) chooses the loss path, the model code, checkpointing and
offloading unless they are set; stack options add their own terms: optimizer-in-backward (one
parameter's gradient alive instead of all of them), paged optimizers and activation offloading
(bytes that may live in host memory: `host_bytes`, outside the GPU peak). docs/estimator.md lists
every term with its public source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from operator import itemgetter
from hubwatch.estimator.frozen import frozen, mutable, once
from hubwatch.estimator.memory.activations import (
    ActivationModel, LoraActivations, activation_model, logits_bytes_per_token, quantized_inputs_per_token,
)
from hubwatch.estimator.memory.kv import (
    NF4_BYTES_PER_PARAM, NF4_NO_DQ_BYTES_PER_PARAM, block_linear_params, kv_cache_bytes_per_sequence, largest_linear,
    weight_bytes,
)
from hubwatch.estimator.memory.roles import LoraPlan, plan_lora
from hubwatch.estimator.memory.settings import MemorySettings
from hubwatch.estimator.params.spec import ModelSpec

__all__ = ["KBIT_UPCAST_STACKS", "MemoryEstimate", "MemoryModel", "SharedFigures", "estimate_memory", "kbit_upcasts",
           "memory_model"]

_VALUE: Callable[[tuple[str, float]], float] = itemgetter(1)  # a (name, bytes) term's bytes

_PARAM_BYTES = {"amp-bf16": 4, "bf16": 2, "fp32": 4}
# Stacks whose QLoRA path runs PEFT's `prepare_model_for_kbit_training` (peft/utils/other.py: "cast all
# non INT8 parameters to fp32"), as PEFT's QLoRA guide does with transformers' Trainer, and Axolotl's
# model loader for a 4-bit QLoRA base. TRL's SFTTrainer calls it too but, given a `peft_config` with
# bf16, casts the embedding and head back to bf16 (`peft_module_casting_to_bf16`, norms stay fp32),
# and some Axolotl releases cast norms and embeddings back for flash-attention: for those runs the
# term overstates by the 2 bytes per parameter — the safe side of a fit decision. torchtune
# (torchao NF4), Unsloth (its own preparation keeps bf16) and LitGPT (Fabric's precision plugin) do not.
KBIT_UPCAST_STACKS = ("hf", "axolotl")


def kbit_upcasts(settings: MemorySettings) -> bool:
    """Whether a QLoRA run under `settings` holds its non-quantised parameters, and so its residual
    stream, in fp32 (PEFT's k-bit preparation; transformers' model code only)."""
    return settings.stack in KBIT_UPCAST_STACKS and settings.effective_implementation == "transformers"


@frozen
class MemoryEstimate:
    """One method's memory: terms alive at the peak (bytes), the peak moment, and the fit figure."""

    method: str
    seq_len: int
    batch: int
    terms: tuple[tuple[str, float], ...]
    moment: str
    moments: tuple[tuple[str, float], ...]
    trainable_params: int
    framework_overhead_bytes: float
    headroom: float
    # Bytes that may live in host memory: paged optimizer states, offloaded activations (not in the peak).
    host_bytes: float = 0.0

    @once
    def peak_bytes(self) -> float:  # the terms are frozen: summed once
        return sum(map(_VALUE, self.terms))

    @property
    def required_bytes(self) -> float:
        """What a card must hold: peak × headroom + the framework's own (unallocated) memory."""
        return self.peak_bytes * self.headroom + self.framework_overhead_bytes

    @once
    def _by_name(self) -> dict[str, float]:
        return dict(self.terms)

    def term(self, name: str) -> float:
        """The bytes of one term (0 for a term this method does not have)."""
        return self._by_name.get(name, 0.0)

    def to_json(self) -> dict[str, object]:
        return {
            "method": self.method,
            "seq_len": self.seq_len,
            "batch": self.batch,
            "peak_gb": _gb(self.peak_bytes),
            "required_gb": _gb(self.required_bytes),
            "terms": {name: _gb(v) for name, v in self.terms},
            "moment": self.moment,
            "moments_gb": {name: _gb(v) for name, v in self.moments},
            "trainable_params": self.trainable_params,
            "framework_overhead_gb": _gb(self.framework_overhead_bytes),
            "headroom": self.headroom,
            "host_gb": _gb(self.host_bytes),
        }


@mutable
class SharedFigures:
    """What the methods of one estimate ask alike of its spec under one settings object, worked out by
    the first method that needs it: made for one report (`memory_report`) and dropped with it.

    LoRA and QLoRA share the adapters' activations (and, unless QLoRA keeps its 4-bit inputs, the whole
    activation model); full fine-tuning and QLoRA share the block linears' parameter count.
    """

    block_linear: int | None = None
    largest_linear: int | None = None
    lora_acts: dict[str, LoraActivations] | None = None
    # Activation models by (full fine-tune?, compute bytes, amp, quantized base): the rest is the settings'.
    activations: dict[tuple[bool, int, bool, bool], ActivationModel] = field(default_factory=dict)
    logits: dict[int, tuple[float, float]] = field(default_factory=dict)  # by compute bytes

    def block_linear_params(self, spec: ModelSpec) -> int:
        if self.block_linear is None:
            self.block_linear = block_linear_params(spec)
        return self.block_linear

    def largest(self, spec: ModelSpec) -> int:
        if self.largest_linear is None:
            self.largest_linear = largest_linear(spec)
        return self.largest_linear


def _gb(value: float) -> float:
    return round(value / 1e9, 3)


def _optimizer_bytes(settings: MemorySettings, params: int, param_bytes: int) -> tuple[float, float]:
    """(states, step temporaries) of the optimizer over `params` trainable parameters."""
    if settings.optimizer == "paged-adamw":
        # bitsandbytes' 32-bit optimizers keep both states in fp32 whatever the parameter dtype
        # (`Optimizer2State.init_state`: float32 when optim_bits is 32); fused step kernel.
        return 8.0 * params, 0.0
    if settings.optimizer in ("adamw-8bit", "paged-adamw-8bit"):
        # bitsandbytes: two 1-byte states and an fp32 absmax per block of 2048; fused step kernel.
        return params * (2.0 + 8 / 2048), 0.0
    if settings.optimizer == "adamw":
        # torch AdamW keeps m and v in the parameter dtype; the fused step (transformers' default
        # `adamw_torch_fused`) needs no temporaries. LitGPT builds `torch.optim.AdamW` with its
        # defaults, which on CUDA take the foreach path (`_multi_tensor_adamw`): its
        # `torch._foreach_sqrt(exp_avg_sqs)` allocates a parameter-sized list for the step.
        step = float(param_bytes * params) if settings.effective_implementation == "litgpt" else 0.0
        return 2.0 * param_bytes * params, step
    return float(param_bytes * params), 0.0  # SGD with momentum: one state


def _head_params(spec: ModelSpec, settings: MemorySettings) -> int:
    """Parameters of the output head as the training code holds them.

    LitGPT's `GPT` has its own `lm_head` Linear next to `transformer.wte` and does not tie them; its
    checkpoint converter copies the embedding into `lm_head.weight` when a checkpoint ties the two
    (`litgpt/scripts/convert_hf_checkpoint.py`, `copy_weights_hf_llama`/`copy_weights_gemma_2`), so a
    tied model trains with a second vocab × hidden matrix. transformers keeps the tie.
    """
    if settings.effective_implementation != "litgpt" or spec.lm_head_params or not spec.tie_word_embeddings:
        return spec.lm_head_params
    if spec.vocab_size <= 0 or spec.family not in ("decoder", "composite"):
        return 0
    return spec.vocab_size * spec.text_stack.hidden_size


def _serve(spec: ModelSpec, settings: MemorySettings, seq_len: int) -> _ServeModel:
    weights = weight_bytes(spec, settings.serve_dtype)
    kv = kv_cache_bytes_per_sequence(spec, seq_len=seq_len, dtype=settings.kv_dtype)
    stack = spec.text_stack
    # Prefill, one layer at a time: hidden states, q/k/v, and the MLP intermediate (bf16).
    att = stack.attention
    per_token = 2 * (3 * stack.hidden_size + (att.num_heads + 2 * att.num_kv_heads) * att.head_dim
                     + 2 * stack.intermediate_size * max(1, stack.experts_per_token if stack.num_experts else 1))
    return _ServeModel("serve", seq_len, settings.framework_overhead_gb * 1e9, settings.headroom,
                       weights, kv, per_token, spec.vocab_size)


@frozen
class _ServeModel:
    """Serving memory with the batch left open (`at(batch)`)."""

    method: str
    seq_len: int
    framework_overhead_bytes: float
    headroom: float
    weights: float
    kv_per_sequence: float
    activations_per_token: int
    vocab_size: int
    host_bytes: float = 0.0

    def totals(self, batch: int) -> tuple[tuple[str, float], ...]:
        """Each peak moment's total at `batch`: `at(batch).moments`, without building the estimate."""
        b = batch
        return (("prefill", sum((self.weights, self.kv_per_sequence * b,
                                 float(self.activations_per_token * b * self.seq_len), 8.0 * self.vocab_size * b))),)

    def required_at(self, batch: int) -> float:
        """`at(batch).required_bytes`, the same float (summed as `totals` does), without building the estimate."""
        b = batch
        total = sum((self.weights, self.kv_per_sequence * b, float(self.activations_per_token * b * self.seq_len),
                     8.0 * self.vocab_size * b))
        return total * self.headroom + self.framework_overhead_bytes

    def at(self, batch: int) -> MemoryEstimate:
        b = batch
        kv = self.kv_per_sequence * b
        activations = float(self.activations_per_token * b * self.seq_len)
        logits = 8.0 * self.vocab_size * b  # fp32 logits of the last position and their softmax
        terms = (("weights", self.weights), ("kv_cache", kv), ("activations", activations), ("logits", logits))
        total = sum(map(_VALUE, terms))
        return MemoryEstimate("serve", self.seq_len, b, terms, "prefill", (("prefill", total),), 0,
                              self.framework_overhead_bytes, self.headroom)


@frozen
class _TrainModel:
    """A training method's memory with the batch left open: what does not depend on the batch, and
    the bytes per token of what does (`at(batch)` multiplies by batch × seq_len tokens)."""

    method: str
    seq_len: int
    trainable_params: int
    framework_overhead_bytes: float
    headroom: float
    weights: float
    states: float
    casts: float
    head_casts: float
    earlier_grads: float
    backward_grads: float
    grads: float
    workspace: float
    step_tmp: float
    retained_per_token: float | None
    kept_per_token: float
    transient_per_token: float
    logits_peak_per_token: float
    logits_kept_per_token: float
    host_fixed: float = 0.0  # paged optimizer states
    host_per_token: float = 0.0  # offloaded activations

    def totals(self, batch: int) -> tuple[tuple[str, float], ...]:
        """Each peak moment's total at `batch`: `at(batch).moments`, the same floats (each term added
        in the same order), without building the estimate."""
        tokens = float(batch * self.seq_len)
        retained = 0.0 if self.retained_per_token is None else self.retained_per_token * tokens
        kept = self.kept_per_token * tokens
        zero = 0.0
        return (
            ("loss", sum((self.weights, self.states, self.casts, self.earlier_grads, kept, retained,
                          self.logits_peak_per_token * tokens, self.workspace))),
            ("head backward", sum((self.weights, self.states, self.head_casts, self.backward_grads,
                                   kept + self.transient_per_token * tokens, zero,
                                   self.logits_kept_per_token * tokens, self.workspace))),
            ("optimizer step", sum((self.weights, self.states, zero, self.grads, zero, zero, zero, self.step_tmp))),
        )

    @once
    def _step_total(self) -> float:  # the optimizer step's total does not depend on the batch
        zero = 0.0
        return sum((self.weights, self.states, zero, self.grads, zero, zero, zero, self.step_tmp))

    def required_at(self, batch: int) -> float:
        """`at(batch).required_bytes`, the same float (the peak is the largest moment's total, each
        summed as `totals` does; the trailing zero KV term adds nothing), without building the estimate."""
        tokens = float(batch * self.seq_len)
        retained = 0.0 if self.retained_per_token is None else self.retained_per_token * tokens
        kept = self.kept_per_token * tokens
        loss = sum((self.weights, self.states, self.casts, self.earlier_grads, kept, retained,
                    self.logits_peak_per_token * tokens, self.workspace))
        head = sum((self.weights, self.states, self.head_casts, self.backward_grads,
                    kept + self.transient_per_token * tokens, 0.0, self.logits_kept_per_token * tokens, self.workspace))
        return max(loss, head, self._step_total) * self.headroom + self.framework_overhead_bytes

    def at(self, batch: int) -> MemoryEstimate:
        tokens = float(batch * self.seq_len)
        retained = 0.0 if self.retained_per_token is None else self.retained_per_token * tokens
        kept = self.kept_per_token * tokens
        transient = self.transient_per_token * tokens
        logits_peak = self.logits_peak_per_token * tokens
        logits_kept = self.logits_kept_per_token * tokens
        weights, states, workspace = self.weights, self.states, self.workspace
        zero = 0.0
        # Each moment's terms, named as in _TRAIN_TERMS.
        loss = (weights, states, self.casts, self.earlier_grads, kept, retained, logits_peak, workspace)
        head = (weights, states, self.head_casts, self.backward_grads, kept + transient, zero, logits_kept, workspace)
        step = (weights, states, zero, self.grads, zero, zero, zero, self.step_tmp)
        totals = (sum(loss), sum(head), sum(step))
        peak = 0  # the first of the largest totals, as max() picks it
        if totals[1] > totals[peak]:
            peak = 1
        if totals[2] > totals[peak]:
            peak = 2
        terms = tuple(zip(_TRAIN_TERMS, (loss, head, step)[peak])) + (("kv_cache", 0.0),)
        return MemoryEstimate(self.method, self.seq_len, batch, terms, _TRAIN_MOMENTS[peak],
                              tuple(zip(_TRAIN_MOMENTS, totals)), self.trainable_params,
                              self.framework_overhead_bytes, self.headroom,
                              self.host_fixed + self.host_per_token * tokens)


# A training step's peak moments and the terms of each (`_TrainModel.at`), in report order.
_TRAIN_MOMENTS = ("loss", "head backward", "optimizer step")
_TRAIN_TERMS = ("weights", "optimizer_states", "autocast_weight_copies", "gradients", "activations",
                "previous_step_inputs", "logits", "workspace")

MemoryModel = _TrainModel | _ServeModel


def estimate_memory(spec: ModelSpec, settings: MemorySettings | None = None, method: str | None = None) -> MemoryEstimate:
    """The memory of `method` (default: `settings.method`) for `spec` under `settings`."""
    settings = settings or MemorySettings()
    return memory_model(spec, settings, method).at(settings.batch)


def memory_model(spec: ModelSpec, settings: MemorySettings | None = None, method: str | None = None, *,
                 lora_plan: LoraPlan | None = None, shared: SharedFigures | None = None) -> MemoryModel:
    """The memory of `method` for `spec` under `settings` with the batch left open: `.at(batch)` is
    `estimate_memory(spec, settings.with_(batch=batch), method)`, the same figures to the last bit.

    Every term is either independent of the batch or bytes per token × batch × seq_len, so a run's
    figures at many batches (the largest batch per card) cost one build and cheap `at` calls.
    `lora_plan`, when given, is `plan_lora(spec, settings.lora_rank, settings.lora_targets)` made
    once for LoRA and QLoRA; `shared`, when given, holds what the methods of one report at these
    settings share (see `SharedFigures`).
    """
    settings = settings or MemorySettings()
    if shared is None:
        shared = SharedFigures()
    method = method or settings.method
    seq_len = settings.resolved_seq_len(spec.max_position_embeddings)
    if method == "serve":
        return _serve(spec, settings, seq_len)
    head = _head_params(spec, settings)
    total = spec.total_params + head - spec.lm_head_params
    litgpt = settings.effective_implementation == "litgpt"
    head_matrix = head if litgpt else max(spec.lm_head_params, spec.embedding_params if spec.tie_word_embeddings else 0)
    retained_per_token: float | None = None
    kbit_upcast = method == "qlora" and kbit_upcasts(settings)
    if method == "full":
        param_bytes = _PARAM_BYTES[settings.precision]
        amp = settings.precision == "amp-bf16"
        compute = 4 if settings.precision == "fp32" else 2
        trainable = total
        weights = float(param_bytes * total)
        casts = 2.0 * (shared.block_linear_params(spec) + head_matrix) if amp else 0.0
        grads = float(param_bytes * total)
        head_grad = float(param_bytes * head_matrix)
        lora_acts = None
        workspace = 0.0
    else:
        plan = lora_plan or plan_lora(spec, settings.lora_rank, settings.lora_targets)
        param_bytes = _PARAM_BYTES[settings.precision]  # the adapters' dtype; the base is frozen
        amp = False
        compute = 2
        trainable = plan.trainable_params
        if method == "qlora":
            linear = shared.block_linear_params(spec)
            # LitGPT quantises every nn.Linear, the head included (Fabric's BitsandbytesPrecision); the
            # embedding stays bf16. PEFT leaves the head in bf16.
            quantized_head = head if litgpt else 0
            nf4 = NF4_BYTES_PER_PARAM if settings.nf4_double_quant else NF4_NO_DQ_BYTES_PER_PARAM
            base = nf4 * (linear + quantized_head) + 2.0 * (total - linear - quantized_head)
            if kbit_upcast:
                # PEFT `prepare_model_for_kbit_training` (see KBIT_UPCAST_STACKS) casts every fp16/bf16
                # parameter that is not `Params4bit` to fp32: the embedding, an untied head and the
                # norms hold 4 bytes per parameter, not 2.
                base += 2.0 * (total - linear)
            # One matrix dequantised at a time; LitGPT quantises from fp16, so it dequantises to fp16
            # and then casts to bf16 (two copies alive).
            workspace = 2.0 * max(shared.largest(spec), quantized_head) * (2 if litgpt else 1)
            if settings.nf4_keeps_inputs and litgpt:
                # bitsandbytes <= 0.42 keeps each 4-bit matmul's input on `ctx.tensors`, freed only with
                # the graph; LitGPT's loop (`litgpt/finetune/lora.py` fit) holds the previous micro-batch's
                # `loss` and `logits` until the next forward has produced new ones, so the previous
                # graph's inputs are still alive while the next forward and loss run.
                retained_per_token = quantized_inputs_per_token(spec, compute_bytes=2, head=quantized_head > 0)
        else:
            base = weight_bytes(spec, "bf16") + 2.0 * (total - spec.total_params)
            workspace = 0.0
        weights = base + param_bytes * trainable
        casts = 0.0
        grads = float(param_bytes * trainable)
        head_grad = 0.0
        # amp-bf16: fp32 adapters under bf16 autocast; fp32: fp32 adapters, no autocast; bf16: all bf16.
        act_bytes = 4 if settings.precision == "fp32" else 2
        own_copy = settings.precision != "bf16"
        lora_acts = shared.lora_acts  # the same for LoRA and QLoRA: one plan, one settings object
        if lora_acts is None:
            lora_acts = shared.lora_acts = {
                s.stack: LoraActivations(s.roles, s.rank_outputs_per_token,
                                         s.adapted_inputs_fused_qkv if litgpt else s.adapted_inputs_per_token,
                                         act_bytes, own_copy, settings.lora_dropout > 0) for s in plan.stacks}
    states, step_tmp = _optimizer_bytes(settings, trainable, param_bytes)
    if settings.optimizer_in_backward and method == "full":
        # torchtune `optimizer_in_bwd` (`training.register_optim_in_bwd_hooks`): each parameter steps in
        # its post-accumulate-grad hook and its gradient is freed, so at most one tensor's gradient is
        # alive; there is no separate optimizer-step moment holding every gradient. LoRA recipes lack it.
        grads = head_grad = float(param_bytes * max(shared.largest(spec), head_matrix, spec.embedding_params))
        step_tmp = 0.0
    accumulating = settings.grad_accumulation > 1
    # Gradients of earlier micro-batches, alive through the next forward and backward.
    earlier_grads = grads if accumulating else 0.0
    if settings.shards > 1:
        # FSDP full shard / ZeRO-3: each card holds 1/N of weights, gradients and states, plus one
        # layer gathered in full (and the next one prefetched) while it computes. Parameters outside
        # the wrapped blocks (embeddings, head, final norm) sit in the root unit, which FSDP does not
        # reshard between forward and backward, so they are gathered in full for the whole step.
        n = settings.shards
        layer = max((s.params / max(1, s.num_layers) for s in spec.stacks), default=0.0)
        weight_dtype = param_bytes if method == "full" else 2
        gathered = 2 * layer * weight_dtype
        outside = max(0.0, total - sum(s.params for s in spec.stacks))
        root = outside * weight_dtype * (1 - 1 / n)
        weights = weights / n + gathered + root
        grads, head_grad, states, step_tmp = grads / n, head_grad / n, states / n, step_tmp / n
        casts = casts / n
        # Under FSDP's `no_sync` (how Fabric/accelerate skip the reduce-scatter between accumulation
        # steps) each card accumulates the full, unsharded gradients (torch FSDP `no_sync` docs), so
        # `earlier_grads` keeps its unsharded size.
    quantized_base = method == "qlora" and settings.nf4_keeps_inputs
    key = (lora_acts is None, compute, amp, quantized_base)
    act = shared.activations.get(key)
    if act is None:
        act = shared.activations[key] = activation_model(
            spec, compute_bytes=compute, amp=amp, seq_len=seq_len, eager=settings.attention == "eager", lora=lora_acts,
            implementation=settings.effective_implementation, quantized_base=quantized_base)
    if settings.effective_checkpointing:
        kept_per_token = act.checkpointed_per_token
        resident_per_token = act.checkpointed_resident_per_token
        transient_per_token = act.one_layer_per_token + act.backward_working_per_token
    else:
        kept_per_token = act.saved_per_token
        resident_per_token = act.saved_resident_per_token
        transient_per_token = act.backward_working_per_token
    if kbit_upcast:
        # With the embedding and norms in fp32 the residual stream is fp32 (the embedding's output is
        # fp32; an fp32 residual plus a bf16 sublayer output stays fp32; transformers' RMSNorm returns
        # `weight * x.to(input_dtype)`): every saved residual-stream tensor is 2 bytes wider per
        # channel — the layer input kept under checkpointing, the two norm inputs of a layer without.
        wider = sum(2.0 * st.hidden_size * st.num_layers for st in spec.training_stacks)
        extra = wider if settings.effective_checkpointing else 2 * wider
        kept_per_token += extra
        resident_per_token += extra * 2 / max(1, max((st.num_layers for st in spec.training_stacks), default=1))
    host_per_token = 0.0
    if settings.effective_offloading:
        # Saved tensors go to host memory as the forward produces them and come back one layer ahead
        # in backward (torchtune `OffloadActivations`, Unsloth's offloaded checkpointing): about two
        # layers' worth stay on the card.
        host_per_token = max(0.0, kept_per_token - resident_per_token)
        kept_per_token = min(kept_per_token, resident_per_token)
    host_fixed = 0.0
    if settings.paged_optimizer:
        # bitsandbytes paged optimizers allocate states with cudaMallocManaged (outside PyTorch's
        # allocator, so not in max_memory_allocated); the driver evicts them to host memory when the
        # card is full, so they need not fit on it.
        host_fixed, states = states, 0.0
    logits = shared.logits.get(compute)
    if logits is None:
        logits = shared.logits[compute] = logits_bytes_per_token(spec, compute_bytes=compute, loss=settings.effective_loss,
                                                                 compiled=settings.compile)
    logits_peak, logits_kept = logits
    # Accumulating: the head's gradient is added in place to the one already there.
    backward_grads = max(head_grad, earlier_grads) if method == "full" else max(grads, earlier_grads)
    return _TrainModel(method, seq_len, trainable, settings.framework_overhead_gb * 1e9, settings.headroom,
                       weights, states, casts, casts if method == "full" else 0.0, earlier_grads, backward_grads,
                       grads, workspace, step_tmp, retained_per_token, kept_per_token, transient_per_token,
                       logits_peak, logits_kept, host_fixed, host_per_token)
