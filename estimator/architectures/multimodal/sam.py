"""SAM-style image encoders (GOT-OCR2's vision tower): a ViT with an absolute position grid, decomposed
relative position tables per layer (window-sized in windowed layers, grid-sized in `global_attn_indexes`
layers) and a convolutional neck down to `output_channels`."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, attention_linears, ffn_linears
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_sam_vision", "is_sam_vision"]


def is_sam_vision(cfg: Cfg) -> bool:
    """A SAM-style encoder by its keys: global-attention layer indexes and a neck width."""
    return cfg.has("global_attn_indexes") and cfg.has("output_channels")


def build_sam_vision(cfg: Cfg, b: Build, prefix: str) -> int:
    """Adds the encoder; returns the neck's width (what the projector receives)."""
    h, n, nh = cfg.need("hidden"), cfg.need("layers"), cfg.need("heads")
    inter = cfg.int("mlp_dim", minimum=1) or cfg.concept("ffn") or 4 * h
    b.divides(nh, h, "num_attention_heads", "hidden_size", cfg.path)
    hd = h // nh
    size = cfg.int("image_size", default=1024, minimum=1) or 1024
    patch = cfg.int("patch_size", default=16, minimum=1) or 16
    chans = cfg.int("num_channels", default=3, minimum=1) or 3
    out = cfg.int("output_channels", default=256, minimum=1) or 256
    window = cfg.int("window_size", default=0) or 0
    global_idx = set(cfg.int_list("global_attn_indexes") or [])
    grid = size // patch
    b.add("embeddings", chans * patch * patch * h + h)
    b.node(f"{prefix}.patch_embed", f"conv2d[{chans}->{h} k{patch}]", (grid * grid, h))
    if cfg.bool("use_abs_pos", default=True):
        b.add("embeddings", grid * grid * h)
    rel = cfg.bool("use_rel_pos", default=True)

    def layer(span: int) -> Layer:
        blk = Layer(f"self_attn[mha {nh}x{hd} span {span}]", f"mlp[plain {inter}]",
                    attention_linears(h, nh, nh, hd, qkv_bias=cfg.bool("qkv_bias", default=True), o_bias=True,
                                      fused="qkv", names=("qkv", "", "", "proj"))
                    + ffn_linears(h, inter, gated=False, bias=True, names=("lin1", "lin2")))
        blk.more("norms", 4 * h)
        if rel:
            blk.more("attention", 2 * (2 * span - 1) * hd)  # rel_pos_h, rel_pos_w
        return blk

    windowed, full = layer(window or grid), layer(grid)
    kinds = [full if (i in global_idx or not window) else windowed for i in range(n)]
    b.stack("vision", f"{prefix}.layers", kinds, hidden=h, intermediate=inter,
            attention=AttentionSpec(nh, nh, hd, ("full",) * n), shape=(grid * grid, h))
    b.add("conv", h * out + 2 * out + out * out * 9 + 2 * out)  # 1x1 conv, norm, 3x3 conv, norm
    b.node(f"{prefix}.neck", f"neck[conv {h}->{out}]", (grid * grid, out))
    return out
