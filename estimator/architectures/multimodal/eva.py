"""EVA / open_clip-style vision towers (width, layers, head_width keys; SwiGLU and sub-LN options)."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, lin
from hubwatch.estimator.config import Cfg, ConfigError
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_eva_vision", "is_eva"]


def is_eva(cfg: Cfg) -> bool:
    return cfg.has("width") and cfg.has("layers") and cfg.has("head_width", "mlp_ratio")


def build_eva_vision(cfg: Cfg, b: Build, prefix: str) -> int:
    w = cfg.int("width", minimum=1, limit=1_000_000) or 1
    n = cfg.int("layers", minimum=1, limit=100_000) or 1
    hw = cfg.int("head_width", default=64, minimum=1) or 64
    b.divides(hw, w, "head_width", "width", prefix)
    heads = max(w // hw, 1)
    hidden = int(w * (cfg.float("mlp_ratio") or 4.0))
    size = cfg.int("image_size", default=224, minimum=1) or 224
    patch = cfg.int("patch_size", default=16, minimum=1) or 16
    if patch > size:
        raise ConfigError(cfg.key("patch_size"), f"{patch} is larger than image_size {size}")
    tokens = (size // patch) ** 2 + 1
    shape = (tokens, w)
    b.add("embeddings", 3 * patch * patch * w + w + w + tokens * w)
    b.node(f"{prefix}.patch_embed", f"conv2d[3->{w} k{patch}]", shape)
    subln, qkv_bias = cfg.bool("subln"), cfg.bool("qkv_bias", default=True)
    linears = [("attention", lin(name, w, w)) for name in ("q_proj", "k_proj", "v_proj")]
    linears.append(("attention", lin("proj", w, w, True)))
    if cfg.bool("naive_swiglu"):
        linears += [("feed_forward", lin("w1", w, hidden, True)), ("feed_forward", lin("w2", w, hidden, True)),
                    ("feed_forward", lin("w3", hidden, w, True))]
    else:
        linears += [("feed_forward", lin("fc1", w, hidden, True)), ("feed_forward", lin("fc2", hidden, w, True))]
    layer = Layer(f"attn[mha {heads}x{hw}]", f"mlp[{'glu' if cfg.bool('naive_swiglu') else 'plain'} {hidden}]", linears)
    layer.more("attention", (2 * w if qkv_bias else 0) + (2 * w if subln else 0))
    layer.more("feed_forward", 2 * hidden if subln else 0)
    layer.more("norms", 4 * w + (2 * w if cfg.raw("ls_init_value") is not None else 0))
    b.stack("vision", f"{prefix}.blocks", [layer] * n, hidden=w, intermediate=hidden,
            attention=AttentionSpec(heads, heads, hw, ("full",) * n), shape=shape, gated=cfg.bool("naive_swiglu"))
    b.add("norms", 2 * w)
    embed = cfg.int("embed_dim", default=w, minimum=1) or w
    if embed != w or cfg.raw("proj_type") not in (None, "none", "identity"):
        b.add("head", w * embed)
        b.node(f"{prefix}.head", f"linear[{w}->{embed}]", (embed,))
    return embed
