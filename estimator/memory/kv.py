"""Serving memory: weights at bf16/int8/int4 (and NF4 for QLoRA), and the KV cache per sequence and batch.

KV cache per layer and token: full-attention layers keep every position, sliding-window layers at
most the window, layers without attention ("none": linear attention, conv, SSM) nothing. A GQA
layer keeps k and v for its KV heads; an MLA layer (DeepSeek-V2/V3) keeps the compressed latent
plus the shared rope key (kv_lora_rank + qk_rope_head_dim values), which is what vLLM/SGLang store;
a decoder layer with cross-attention also keeps k and v of the encoder output (taken as long as
the input).
"""

from __future__ import annotations

from hubwatch.estimator.params.spec import AttentionSpec, ModelSpec, StackSpec

__all__ = [
    "KV_BYTES",
    "NF4_BYTES_PER_PARAM",
    "NF4_NO_DQ_BYTES_PER_PARAM",
    "block_linear_params",
    "kv_cache_bytes",
    "kv_cache_bytes_per_sequence",
    "largest_linear",
    "weight_bytes",
]

KV_BYTES = {"bf16": 2, "fp8": 1, "fp32": 4}
# NF4 with double quantisation (bitsandbytes/QLoRA): 4 bits a weight, an 8-bit absmax per block of 64,
# and an fp32 constant per 256 of those absmax values.
NF4_BYTES_PER_PARAM = 0.5 + 1 / 64 + 4 / (64 * 256)
NF4_NO_DQ_BYTES_PER_PARAM = 0.5 + 4 / 64  # without double quantisation: an fp32 absmax per block of 64
# Weight-only int8 (per-output-channel fp16 scale) and int4 (group of 128: fp16 scale + zero point).
_INT8_PER_PARAM = 1.0
_INT4_PER_PARAM = 0.5 + 4 / 128


def block_linear_params(spec: ModelSpec) -> int:
    """Parameters in the repeated blocks' linear layers (what quantisation applies to)."""
    known = sum([linear.params for stack in spec.stacks for linear in stack.linears])
    if known:
        return min(known, spec.total_params)
    # No linears described: everything but the embeddings and the head, a conservative guess.
    return max(0, spec.total_params - spec.embedding_params - spec.lm_head_params)


def largest_linear(spec: ModelSpec) -> int:
    """Elements of the largest single linear matrix (a QLoRA dequantisation buffer holds one)."""
    sizes = [linear.in_features * linear.out_features for s in spec.stacks for linear in s.linears]
    return max(sizes, default=0)


def weight_bytes(spec: ModelSpec, dtype: str) -> float:
    """Bytes of the weights served or frozen in `dtype` (bf16, int8, int4, nf4, fp32).

    Quantised formats apply to the blocks' linear layers; embeddings, norms and the head stay bf16.
    """
    total = spec.total_params
    if dtype == "bf16":
        return 2.0 * total
    if dtype == "fp32":
        return 4.0 * total
    linear = block_linear_params(spec)
    rest = total - linear
    per = {"int8": _INT8_PER_PARAM, "int4": _INT4_PER_PARAM, "nf4": NF4_BYTES_PER_PARAM}[dtype]
    extra = 0.0
    if dtype == "int8":
        extra = sum(2.0 * l.out_features * l.count for s in spec.stacks for l in s.linears)
    return per * linear + 2.0 * rest + extra


def _layer_kinds(att: AttentionSpec, num_layers: int) -> tuple[int, int]:
    """(full-attention layers, sliding-window layers)."""
    if att.layer_types:
        kinds = att.layer_types[:num_layers]
        kinds += (kinds[-1] if kinds else "full",) * (num_layers - len(kinds))
        sliding = kinds.count("sliding")
        full = len(kinds) - sliding - kinds.count("none")
        if att.sliding_window is None:
            return full + sliding, 0
        return full, sliding
    if att.sliding_window:
        return 0, num_layers
    return num_layers, 0


def _per_token_layer(att: AttentionSpec, value_bytes: int) -> int:
    if att.kv_lora_rank is not None:
        return ((att.kv_lora_rank or 0) + (att.qk_rope_head_dim or 0)) * value_bytes
    return att.num_kv_heads * (att.head_dim + (att.v_head_dim or att.head_dim)) * value_bytes


def _decoder_stacks(spec: ModelSpec) -> tuple[StackSpec, ...]:
    decoders = tuple(s for s in spec.stacks if s.name == "decoder")
    if decoders:
        return decoders
    if spec.family in ("encoder", "vision"):
        return ()
    return (spec.text_stack,)


def kv_cache_bytes(spec: ModelSpec, *, batch: int, seq_len: int, dtype: str = "bf16") -> float:
    """KV cache bytes for `batch` sequences of `seq_len` tokens (0 for encoder-only models)."""
    return kv_cache_bytes_per_sequence(spec, seq_len=seq_len, dtype=dtype) * batch


def kv_cache_bytes_per_sequence(spec: ModelSpec, *, seq_len: int, dtype: str = "bf16") -> float:
    """KV cache bytes for one sequence of `seq_len` tokens (the cache is linear in the batch)."""
    value_bytes = KV_BYTES[dtype]
    total = 0.0
    for stack in _decoder_stacks(spec):
        att = stack.attention
        full, sliding = _layer_kinds(att, stack.num_layers)
        window = min(seq_len, att.sliding_window or seq_len)
        per_layer = _per_token_layer(att, value_bytes)
        total += per_layer * (full * seq_len + sliding * window)
        if att.cross_attention:
            cross = att.num_kv_heads * (att.head_dim + (att.v_head_dim or att.head_dim)) * value_bytes
            total += cross * stack.num_layers * seq_len
    return total
