"""Hand-built ModelSpecs for the memory tests (independent of the config parser)."""

from __future__ import annotations

from hubwatch.estimator.params.spec import AttentionSpec, LinearSpec, ModelSpec, StackSpec


def llama_like(*, layers: int = 32, hidden: int = 4096, inter: int = 11008, heads: int = 32,
               kv_heads: int = 32, vocab: int = 32000, tied: bool = False, max_pos: int | None = 4096,
               layer_types: tuple[str, ...] = (), sliding_window: int | None = None,
               model_type: str = "llama") -> ModelSpec:
    """A Llama-style decoder (gated MLP, q/k/v/o projections, RMSNorm) with exact parameter counts."""
    d = hidden // heads
    linears = (
        LinearSpec("q_proj", hidden, heads * d, layers),
        LinearSpec("k_proj", hidden, kv_heads * d, layers),
        LinearSpec("v_proj", hidden, kv_heads * d, layers),
        LinearSpec("o_proj", heads * d, hidden, layers),
        LinearSpec("gate_proj", hidden, inter, layers),
        LinearSpec("up_proj", hidden, inter, layers),
        LinearSpec("down_proj", inter, hidden, layers),
    )
    linear_params = sum(l.params for l in linears)
    norms = layers * 2 * hidden + hidden
    embed = vocab * hidden
    head = 0 if tied else vocab * hidden
    stack = StackSpec(
        "decoder", layers, hidden, inter,
        AttentionSpec(heads, kv_heads, d, layer_types=layer_types, sliding_window=sliding_window),
        linears, gated_mlp=True, params=linear_params + norms,
    )
    total = linear_params + norms + embed + head
    return ModelSpec(model_type, "decoder", vocab, max_pos, (stack,), total, total, embed, head, tied, "bfloat16")
