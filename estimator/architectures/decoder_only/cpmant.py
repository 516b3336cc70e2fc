"""CPM-Ant: a decoder with prompt and segment embeddings, a segment-aware relative position bias shared by all
layers, its own head width (`dim_head`), a gated feed-forward (`dim_ff`) and weight-only LayerNorms."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, attention_linears, ffn_linears
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.heads import add_head, head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_cpmant"]


def build_cpmant(cfg: Cfg, b: Build) -> None:
    """The input embedding also holds `prompt_types × prompt_length` prompt rows, so the head (vocabulary rows
    only) is never the same tensor: it is counted on its own whatever `tie_word_embeddings` says."""
    h, n, nh, vocab = cfg.need("hidden"), cfg.need("layers"), cfg.need("heads"), cfg.need("vocab")
    hd = cfg.int("dim_head", default=h // nh, minimum=1) or h // nh
    ff = cfg.int("dim_ff", minimum=1) or cfg.need("ffn")
    prompts = (cfg.int("prompt_types", default=32) or 0) * (cfg.int("prompt_length", default=32) or 0)
    segments = cfg.int("segment_types", default=32) or 0
    buckets = cfg.int("position_bias_num_buckets", default=512) or 0
    b.vocab = vocab
    shape = (b.seq, h)
    b.embed("cpmant.input_embedding", vocab + prompts, h, shape)
    b.embed("cpmant.segment_embedding", segments, h, shape, "token_type_embedding")
    b.add("attention", (segments * segments + buckets) * nh)
    b.node("cpmant.position_bias", f"relative_bias[{segments}x{segments}+{buckets}, {nh} heads]", (nh,))
    layer = Layer(f"self_attn[mha {nh}x{hd}]", f"mlp[gated {ff}]",
                  attention_linears(h, nh, nh, hd, qkv_bias=False, o_bias=False)
                  + ffn_linears(h, ff, gated=True, bias=False))
    layer.more("norms", 2 * h)
    b.stack("decoder", "cpmant.encoder.layers", [layer] * n, hidden=h, intermediate=ff,
            attention=AttentionSpec(nh, nh, hd, ("full",) * n), shape=shape, gated=True)
    b.add("norms", h)
    b.node("cpmant.encoder.output_layernorm", "norm[layer, no bias]", shape)
    b.final_norm = True
    cfg.bool("tie_word_embeddings")  # read: it cannot tie tensors of different shapes (see the docstring)
    add_head(cfg, b, head_kind(cfg, default="lm"), h, vocab, tie=False, bias=False, family="decoder")
