"""The model description the parameter counter produces and the memory model consumes.

This is the contract between `estimator.params` (config → ModelSpec) and `estimator.memory`
(ModelSpec + settings → bytes). Everything here is plain numbers: no torch, no I/O.
"""

from __future__ import annotations

from dataclasses import field

from hubwatch.estimator.frozen import frozen, once

__all__ = ["AttentionSpec", "LinearSpec", "ModelSpec", "StackSpec"]


@frozen
class LinearSpec:
    """One kind of linear layer inside a repeated block, e.g. `q_proj` of every decoder layer.

    `name` uses the module name the checkpoint uses (q_proj, k_proj, v_proj, o_proj, gate_proj,
    up_proj, down_proj, query_key_value, dense, fc1, c_attn, …) so LoRA targets can be matched.
    `count` is how many such matrices exist across the stack (layers × experts where relevant);
    `active_count` how many one token passes through (MoE: layers × experts used per token).
    """

    name: str
    in_features: int
    out_features: int
    count: int
    bias: bool = False
    active_count: int | None = None

    @property
    def params(self) -> int:
        return self.count * (self.in_features * self.out_features + (self.out_features if self.bias else 0))


@frozen
class AttentionSpec:
    """What the KV cache and attention activations depend on, for one stack."""

    num_heads: int
    num_kv_heads: int
    head_dim: int
    # Per layer: "full", "sliding" or "none" (no KV cache: linear-attention / conv / SSM layers).
    layer_types: tuple[str, ...] = ()
    sliding_window: int | None = None
    # MLA (DeepSeek-V2/V3 style): the cache holds kv_lora_rank + qk_rope_head_dim per token per layer.
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    # Value head dim where it differs from head_dim (MLA v_head_dim).
    v_head_dim: int | None = None
    cross_attention: bool = False  # decoder layers attend to an encoder's output


@frozen
class StackSpec:
    """A stack of repeated blocks (a decoder, an encoder, a vision tower)."""

    name: str  # "decoder", "encoder", "vision", "audio", …
    num_layers: int
    hidden_size: int
    intermediate_size: int
    attention: AttentionSpec
    linears: tuple[LinearSpec, ...] = ()
    num_experts: int = 0
    experts_per_token: int = 0
    gated_mlp: bool = False
    params: int = 0  # all parameters of this stack (layers, its norms, its own embeddings)


@frozen
class ModelSpec:
    """A model as the memory and cost estimators see it."""

    model_type: str
    family: str  # "encoder", "decoder", "encoder-decoder", "vision", "composite", "unknown"
    vocab_size: int
    max_position_embeddings: int | None
    stacks: tuple[StackSpec, ...]
    total_params: int
    active_params: int  # per token (= total_params unless MoE)
    embedding_params: int
    lm_head_params: int  # 0 when tied or when there is no LM head
    tie_word_embeddings: bool
    torch_dtype: str | None = None
    by_component: dict[str, int] = field(default_factory=dict)

    @once
    def training_stacks(self) -> tuple[StackSpec, ...]:
        """The stacks text tokens pass through (vision/audio towers are left out: text-only batches)."""
        text = tuple(s for s in self.stacks if s.name not in ("vision", "audio"))
        return text or self.stacks[:1]

    @property
    def text_stack(self) -> StackSpec:
        """The stack that generates tokens (the decoder when there is one)."""
        for stack in self.stacks:
            if stack.name == "decoder":
                return stack
        return self.stacks[0]
