"""Activation memory of a training step: what autograd keeps per token and layer, and the logits/loss.

The model is Korthikanti et al. (2022) made concrete for today's fine-tuning code (transformers
with SDPA/flash attention, no dropout), tensor by tensor, per token and layer:
- each norm keeps its input upcast to fp32 (RMSNorm) or its input (LayerNorm) and its normalised
  output (2 norms per layer, 1 where attention and MLP share one, read from the norm parameters);
- attention keeps q, k, v (k and v at the KV-head width), its output and the fp32 log-sum-exp;
  `eager` attention adds the fp32 softmax and its compute-dtype copy (a·s per token);
- a linear keeps its input only when its own weight trains or a LoRA adapter sits on it (a
  frozen matrix needs no input to pass the gradient through) — so the output projection's
  and the down projection's inputs are dropped for a frozen-base LoRA that does not target them;
- the MLP keeps the activation's input, its output and the up projection (gated) or the
  activation's input (plain);
- LoRA adds its rank-sized intermediate (r values) per adapted matrix; adapters kept in fp32 on a
  bf16 base (PEFT's default; amp-bf16 and fp32 recipes) cast their input, so each keeps its own
  copy of it (bf16 under autocast, fp32 without) while the frozen base keeps none;
- under amp-bf16 the residual stream is fp32 and every linear keeps its own bf16 copy of its input;
- a QLoRA base keeps no input with current bitsandbytes; releases up to about 0.42 kept every
  4-bit matmul's input (`nf4_keeps_inputs`), like a trainable matrix;
- gradient checkpointing keeps each layer's input and recomputes one layer at a time.
Logits (`logits_bytes_per_token`), by loss path:
- `fp32` (transformers): the compute-dtype logits, an fp32 copy for the loss (`logits.float()` in
  `ForCausalLMLoss`) and its saved log-softmax, and the gradient chain of the loss at the start of
  backward; the training loop keeps only the loss, so the logits do not outlive the forward pass;
- `chunked` (LitGPT `chunked_cross_entropy`): logits and the saved log-softmax in the compute dtype;
- `chunked-fp32` (torchtune `LinearCrossEntropyLoss`, 8 chunks): every chunk's fp32 log-softmax is
  saved, but only one chunk's logits and fp32 copy exist at a time;
- `fused` (Unsloth): loss and gradient computed chunk by chunk in the forward; what stays is the
  gradient of the final hidden states.
With activation offloading the kept tensors go to host memory; `*_resident_per_token` is what stays
on the card (two layers' worth: the one being copied and the one fetched ahead).
"""

from __future__ import annotations


from hubwatch.estimator.frozen import frozen
from hubwatch.estimator.memory.roles import per_stack, stack_roles
from hubwatch.estimator.params.spec import ModelSpec, StackSpec

__all__ = [
    "LAYERNORM_MODEL_TYPES",
    "PY_GELU_MODEL_TYPES",
    "ActivationModel",
    "LoraActivations",
    "activation_model",
    "logits_bytes_per_token",
    "quantized_inputs_per_token",
    "training_stacks",
]

_NORM_INPUT_ROLES = ("q", "k", "v", "qkv", "kv", "gate", "up", "gate_up", "router")
_NORM_INPUT_ROLE_SET = frozenset(_NORM_INPUT_ROLES)
# Families whose transformers code uses nn.LayerNorm (keeps its input, not an fp32 upcast).
LAYERNORM_MODEL_TYPES = frozenset({
    "gpt2", "phi", "falcon", "RefinedWebModel", "RefinedWeb", "gpt_neox", "gptj", "gpt_neo", "codegen", "opt",
    "bloom", "bert", "roberta", "xlm-roberta", "distilbert", "stablelm", "starcoder2", "gpt_bigcode", "mpt",
    "bart", "mbart", "whisper", "vit", "clip", "deberta-v2", "jina_bert",
})
# Families whose default activation is transformers' Python tanh-GELU (`gelu_new`).
PY_GELU_MODEL_TYPES = frozenset({"gpt2", "phi", "gptj", "gpt_neo", "codegen", "imagegpt"})


@frozen
class ActivationModel:
    """Bytes per token: kept by all layers, kept with checkpointing, one layer recomputed, transient."""

    saved_per_token: float  # all layers, no checkpointing
    checkpointed_per_token: float  # layer inputs only
    one_layer_per_token: float  # the largest layer's saved tensors (recomputed under checkpointing)
    backward_working_per_token: float  # gradient buffers while one layer runs backward
    # With activation offloading: what stays on the card (two layers in flight and the final norm).
    saved_resident_per_token: float = 0.0
    checkpointed_resident_per_token: float = 0.0


def training_stacks(spec: ModelSpec) -> tuple[StackSpec, ...]:
    """The stacks text tokens pass through (vision/audio towers are left out: text-only batches)."""
    return spec.training_stacks


@per_stack
def _mlp_width(stack: StackSpec) -> tuple[float, bool]:
    """(MLP width a token passes through, gated?) from the down projections when they are known."""
    width = 0.0
    gated = stack.gated_mlp
    layers = max(1, stack.num_layers)
    for linear, role in zip(stack.linears, stack_roles(stack)):
        if role == "down":
            per_token = (linear.active_count if linear.active_count is not None else linear.count) / layers
            width += per_token * linear.in_features
        if role in ("gate", "gate_up"):
            gated = True
    if width == 0:
        experts = stack.experts_per_token if stack.num_experts else 1
        width = float(stack.intermediate_size * max(1, experts))
    return width, gated


@per_stack
def _norm_input_copies(stack: StackSpec) -> float:
    layers = max(1, stack.num_layers)
    copies = 0.0
    for linear, role in zip(stack.linears, stack_roles(stack)):
        if linear.in_features == stack.hidden_size and role in _NORM_INPUT_ROLE_SET:
            copies += (linear.active_count if linear.active_count is not None else linear.count) / layers
    return copies or 3.0


@frozen
class LoraActivations:
    """What LoRA adds per token, over a whole stack: rank outputs, adapted inputs, adapter dtype."""

    roles: frozenset[str]
    rank_outputs: int
    adapted_inputs: int
    act_bytes: int  # dtype of the adapters' activations (rank outputs, input copies)
    own_copy: bool  # adapters in another dtype than the base: each keeps its own copy of its input
    dropout: bool = False  # LoRA dropout: each adapter keeps its dropped input and a 1-byte mask


def _norms_per_layer(spec: ModelSpec, stack: StackSpec) -> int:
    """Norms in each layer (2; 1 for parallel attention/MLP sharing one norm, e.g. Falcon-7B, Phi-2).

    Read from the norm parameter count of a single-stack model: (norms / width − final norm) / layers.
    """
    total = spec.by_component.get("norms")
    if not total or len(training_stacks(spec)) != 1 or stack.num_layers < 1:
        return 2
    width = (2 if spec.model_type in LAYERNORM_MODEL_TYPES else 1) * stack.hidden_size
    per_layer = (total / width - 1) / stack.num_layers
    return min(3, max(1, round(per_layer)))


def _layer_bytes(stack: StackSpec, *, model_type: str, compute: int, amp: bool, lora: LoraActivations | None,
                 seq_len: int, eager: bool, norms_per_layer: int = 2,
                 implementation: str = "transformers", quantized_base: bool = False) -> tuple[float, float]:
    """(saved bytes per token of one layer, backward working bytes per token)."""
    h = stack.hidden_size
    layers = max(1, stack.num_layers)
    att = stack.attention
    heads = att.num_heads
    mla = att.kv_lora_rank is not None
    kv_heads = heads if mla else att.num_kv_heads
    d, dv = att.head_dim, att.v_head_dim or att.head_dim
    full = lora is None
    # Adapters in another dtype than the base (PEFT upcasts them to fp32) cast their input: each keeps
    # its own copy (bf16 again under autocast, fp32 without).
    own_copy = lora is not None and lora.own_copy

    def keeps(*roles: str) -> bool:
        if full or quantized_base:
            return True  # bitsandbytes' 4-bit matmul keeps its input whenever the input needs a gradient
        assert lora is not None
        return not own_copy and bool(lora.roles.intersection(roles))

    residual = 4 if (amp or compute == 4) else compute
    if implementation == "unsloth" and lora is not None:
        return _unsloth_layer_bytes(stack, compute=compute, residual=residual, lora=lora, seq_len=seq_len, eager=eager,
                                    norms_per_layer=norms_per_layer)
    layer_norm = model_type in LAYERNORM_MODEL_TYPES
    norm_input = residual * h if layer_norm else 4 * h  # LayerNorm keeps its input; RMSNorm an fp32 upcast
    norm_output = compute * h if (full or keeps(*_NORM_INPUT_ROLES)) else 0
    norms = norms_per_layer * (norm_input + norm_output)
    if implementation == "litgpt":
        kv_heads = heads  # LitGPT expands k and v to every query head before SDPA
    attn = compute * (heads * d + kv_heads * d + kv_heads * dv + heads * dv) + 4 * heads
    if mla:
        attn += compute * ((att.kv_lora_rank or 0) + (att.qk_rope_head_dim or 0))
    if eager:
        attn += heads * seq_len * (4 + compute)
    if keeps("o"):
        attn += compute * heads * dv
    width, gated = _mlp_width(stack)
    mlp = compute * width * (3 if gated else 1)
    if not gated and model_type in PY_GELU_MODEL_TYPES and implementation == "transformers":
        mlp += compute * width * 3  # tanh-GELU written in Python keeps three more intermediates
    if keeps("down"):
        mlp += compute * width
    if stack.num_experts:
        mlp += 2 * compute * h * max(1, stack.experts_per_token) + 8 * stack.num_experts  # routed copies, router
    casts = 2 * h * _norm_input_copies(stack) if (amp and full) else 0.0
    extra = 0.0
    if lora is not None:
        extra = lora.act_bytes * lora.rank_outputs / layers
        if own_copy:
            extra += lora.act_bytes * lora.adapted_inputs / layers
        if lora.dropout:
            extra += (compute + 1) * lora.adapted_inputs / layers
    saved = norms + attn + mlp + casts + extra
    working = compute * (2 * width + 4 * h) + (4 + compute) * heads * seq_len * (1 if eager else 0)
    return saved, working


def _unsloth_layer_bytes(stack: StackSpec, *, compute: int, residual: int, lora: LoraActivations, seq_len: int,
                         eager: bool, norms_per_layer: int) -> tuple[float, float]:
    """(saved, backward working) bytes per token of one layer under Unsloth's LoRA kernels.

    `Fast_RMS_Layernorm` saves its input and the per-row inverse RMS (unsloth/kernels/rms_layernorm.py);
    `LoRA_QKV` and `LoRA_W` save their input X, `LoRA_MLP` saves X and the gate/up outputs e, g — not
    the SwiGLU product, which backward rebuilds in place inside e and g (unsloth/kernels/fast_lora.py,
    swiglu.py); the rank-r intermediates X·A are recomputed. Attention keeps q, k, v, its output and
    the fp32 log-sum-exp as flash/SDPA does.
    """
    h = stack.hidden_size
    att = stack.attention
    heads = att.num_heads
    kv_heads = heads if att.kv_lora_rank is not None else att.num_kv_heads
    d, dv = att.head_dim, att.v_head_dim or att.head_dim
    width, gated = _mlp_width(stack)
    norms = norms_per_layer * residual * h
    attn = compute * (h + heads * d + kv_heads * d + kv_heads * dv + 2 * heads * dv) + 4 * heads
    if eager:
        attn += heads * seq_len * (4 + compute)
    mlp = compute * (h + width * (2 if gated else 1))
    if stack.num_experts:
        mlp += 2 * compute * h * max(1, stack.experts_per_token) + 8 * stack.num_experts
    extra = (compute + 1) * lora.adapted_inputs / max(1, stack.num_layers) if lora.dropout else 0.0
    working = compute * (width + 2 * h) + (4 + compute) * heads * seq_len * (1 if eager else 0)
    return norms + attn + mlp + extra, working


def activation_model(spec: ModelSpec, *, compute_bytes: int, amp: bool, seq_len: int, eager: bool,
                     lora: dict[str, LoraActivations] | None, implementation: str = "transformers",
                     quantized_base: bool = False) -> ActivationModel:
    """Per-token activation bytes of a training step over the text stacks (see the module doc).

    `lora` None means every weight trains (full fine-tune); otherwise stack name → what LoRA adds.
    """
    saved = ckpt = one = work = 0.0
    final = unit = 0.0
    for stack in training_stacks(spec):
        layers = max(1, stack.num_layers)
        stack_lora = None if lora is None else lora.get(stack.name)
        if lora is not None and stack_lora is None:  # a stack LoRA leaves alone
            stack_lora = LoraActivations(frozenset(), 0, 0, compute_bytes, False)
        layer, working = _layer_bytes(
            stack, model_type=spec.model_type, compute=compute_bytes, amp=amp,
            lora=stack_lora, seq_len=seq_len, eager=eager,
            norms_per_layer=_norms_per_layer(spec, stack), implementation=implementation,
            quantized_base=quantized_base,
        )
        residual = 4 if (amp or compute_bytes == 4) else compute_bytes
        final_norm = (residual if spec.model_type in LAYERNORM_MODEL_TYPES else 4) * stack.hidden_size
        final_norm += compute_bytes * stack.hidden_size
        saved += layer * layers + final_norm
        ckpt += residual * stack.hidden_size * layers + final_norm
        one = max(one, layer)
        work = max(work, working)
        final += final_norm
        unit = max(unit, residual * stack.hidden_size)
    return ActivationModel(saved, ckpt, one, work, min(saved, 2 * one + final), min(ckpt, 2 * unit + final))


def quantized_inputs_per_token(spec: ModelSpec, *, compute_bytes: int, head: bool) -> float:
    """Bytes per token of the distinct inputs of every block linear (and the head when `head`).

    What bitsandbytes releases up to 0.42 keep for each 4-bit matmul: `MatMul4Bit.forward` stores its
    input as `ctx.tensors = (A, B)` (bitsandbytes/autograd/_functions.py), a plain attribute rather than
    `save_for_backward`, so autograd never releases it after the node's backward; it lives as long as
    the graph. Linears reading the same tensor (q/k/v on one norm output, gate/up on another, or one
    shared norm for parallel attention/MLP) hold it once: per layer the norm outputs (1 or 2), the
    attention output (input of the output projection) and the MLP activation (input of the down
    projection); the head reads the final norm's output.
    """
    total = 0.0
    for stack in training_stacks(spec):
        att = stack.attention
        width, _ = _mlp_width(stack)
        norm_inputs = min(2, _norms_per_layer(spec, stack))
        per_layer = norm_inputs * stack.hidden_size + att.num_heads * (att.v_head_dim or att.head_dim) + width
        total += per_layer * max(1, stack.num_layers)
    if head:
        total += spec.text_stack.hidden_size
    return float(compute_bytes * total)


def logits_bytes_per_token(spec: ModelSpec, *, compute_bytes: int, loss: str,
                           compiled: bool = False) -> tuple[float, float]:
    """(peak, kept through backward) bytes per token of the logits and the loss; (0, 0) with no LM head.

    `compiled`: the loss runs under torch.compile. Inductor's cross-entropy reads its input once for
    the log-sum-exp and saves the input and that per-row scalar instead of a log-softmax; backward
    writes one gradient the size of the input. torchtune compiles `compute_cross_entropy`, upcast
    included, so a chunked loss keeps the compute-dtype chunks only; the non-chunked loss gets the
    fp32 logits from the model (`TransformerDecoder`'s `.float()` runs outside the compiled region).
    """
    has_head = spec.lm_head_params > 0 or (spec.tie_word_embeddings and spec.family in ("decoder", "encoder-decoder", "composite"))
    if not has_head or spec.vocab_size <= 0:
        return 0.0, 0.0
    v = spec.vocab_size
    if loss == "chunked":
        return 2 * compute_bytes * v, 2 * compute_bytes * v
    upcast = 0 if compute_bytes == 4 else 4  # .float() makes a copy only when logits are not fp32
    if loss == "fused":
        # The loss's gradient with respect to the final hidden states, computed in the forward and saved.
        return float(compute_bytes * spec.text_stack.hidden_size), float(compute_bytes * spec.text_stack.hidden_size)
    if compiled and loss == "chunked-fp32":
        chunks = 8
        # All chunks' compute-dtype logits (the model returns the list, the compiled loss saves each),
        # and one chunk's gradient at a time in backward.
        return float(compute_bytes * v * (1 + 1 / chunks)), float(compute_bytes * v)
    if compiled and loss == "fp32":
        # Forward: logits + the fp32 copy the compiled loss reads and saves; backward: that copy + its
        # fp32 gradient.
        return float(max(compute_bytes + upcast, 8) * v), float(4 * v)
    if loss == "chunked-fp32":
        chunks = 8  # torchtune's num_output_chunks default
        # Forward: every chunk's fp32 log-softmax saved + one chunk's logits and fp32 copy; backward of a
        # chunk: the saved log-softmax + that chunk's two fp32 gradients and the compute-dtype one.
        return 4.0 * v + (compute_bytes + upcast) * v / chunks, 4.0 * v + (8 + compute_bytes) * v / chunks
    if loss == "fp32-shifted":
        # transformers 4.46-4.49 `ForCausalLMLoss` (and `LlamaForCausalLM.forward` before it): the model's
        # output keeps the compute-dtype logits while the loss upcasts them and takes a shifted
        # contiguous copy ([seq - 1, V]) for cross-entropy: logits + fp32 copy + shifted copy +
        # log-softmax alive at the loss; backward: log-softmax + its two fp32 gradients.
        return float(max(compute_bytes + upcast + 4 + 4, 12) * v), float(4 * v)
    # Forward: logits + fp32 copy + log-softmax. The caller keeps only the loss, so the logits and
    # the copy go once the loss exists; backward of the loss: log-softmax + two fp32 gradients.
    peak = max(compute_bytes + upcast + 4, 4 + 4 + 4)
    return float(peak * v), float(4 * v)
