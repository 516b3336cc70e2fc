"""Vision and multimodal models: ViT/CLIP/SigLIP towers, CLIP-style dual towers, LLaVA-style vision + language."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, attention_linears, ffn_linears, transformer_dims
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.heads import head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_text_tower", "build_vision", "build_vision_tower"]


def _block(h: int, nh: int, inter: int, *, qkv_bias: bool = True, names: tuple[str, ...] = ("q_proj", "k_proj",
           "v_proj", "out_proj", "fc1", "fc2")) -> Layer:
    hd = h // max(nh, 1)
    linears = attention_linears(h, nh, nh, hd, qkv_bias=qkv_bias, o_bias=True, names=names[:4])  # type: ignore[arg-type]
    linears += ffn_linears(h, inter, gated=False, bias=True, names=names[4:])
    layer = Layer(f"self_attn[mha {nh}x{hd}]", f"mlp[plain {inter}]", linears)
    layer.more("norms", 4 * h)
    return layer


def build_vision_tower(cfg: Cfg, b: Build, prefix: str, style: str) -> int:
    """Adds a ViT-style image encoder; returns its hidden size. style: vit | clip | siglip."""
    h, n_layers, nh, inter = transformer_dims(cfg, b, prefix)
    size_h, size_w = _pair(cfg, "image_size", 224)
    patch_h, patch_w = _pair(cfg, "patch_size", 16)
    patch = patch_h
    chans = cfg.int("num_channels", default=3, minimum=1) or 3
    b.check(size_h % patch_h == 0 and size_w % patch_w == 0,
            f"{prefix}: patch_size ({patch_h}x{patch_w}) does not divide image_size ({size_h}x{size_w})")
    patches = (size_h // patch_h) * (size_w // patch_w)
    if style == "pixtral":
        return _pixtral(cfg, b, prefix, h, n_layers, nh, inter, chans, patch, patches)
    tokens = patches + (0 if style == "siglip" else 1)
    shape = (tokens, h)
    b.add("embeddings", chans * patch * patch * h + (0 if style == "clip" else h))
    b.node(f"{prefix}.embeddings.patch_embedding", f"conv2d[{chans}->{h} k{patch}]", (patches, h))
    if style != "siglip":
        b.add("embeddings", h)
    b.add("embeddings", tokens * h)
    b.node(f"{prefix}.embeddings.position_embedding", f"position_embedding[{tokens}x{h}]", shape)
    if style == "clip":
        b.add("norms", 2 * h)
    qkv_bias = cfg.bool("qkv_bias", default=True)
    layer = _block(h, nh, inter, qkv_bias=qkv_bias)
    b.stack("vision", f"{prefix}.encoder.layers", [layer] * n_layers, hidden=h, intermediate=inter,
            attention=AttentionSpec(nh, nh, h // nh, ("full",) * n_layers), shape=shape)
    b.add("norms", 2 * h)
    b.node(f"{prefix}.post_layernorm", "norm[ln]", shape)
    if style == "siglip" and cfg.bool("vision_use_head", default=cfg.model_type.startswith("siglip")):
        b.add("head", h + 4 * h * h + 4 * h + 2 * h + 2 * h * inter + inter + h)
        b.node(f"{prefix}.head", "attention_pooling_head", (h,))
    return h


def build_text_tower(cfg: Cfg, b: Build, prefix: str, style: str) -> int:
    """A CLIP/SigLIP text encoder: token and position embeddings, layers, final norm."""
    h, n_layers, nh, inter = transformer_dims(cfg, b, prefix)
    vocab = cfg.need("vocab")
    pos = cfg.concept("max_pos", minimum=1) or 77
    seq = min(b.seq, pos)
    b.add("embeddings", vocab * h + pos * h)
    b.node(f"{prefix}.embeddings", f"embedding[{vocab}x{h}]+position[{pos}]", (seq, h))
    b.stack("text", f"{prefix}.encoder.layers", [_block(h, nh, inter)] * n_layers, hidden=h, intermediate=inter,
            attention=AttentionSpec(nh, nh, h // nh, ("full",) * n_layers), shape=(seq, h))
    b.add("norms", 2 * h)
    if style == "siglip":
        proj = cfg.int("projection_size", default=h) or h
        b.add("head", h * proj + proj)
    return h


def build_vision(cfg: Cfg, b: Build) -> None:
    """A single ViT-style image model with the head its architecture names."""
    style = vision_style(cfg)
    h = build_vision_tower(cfg, b, "vit", style)
    kind = head_kind(cfg)
    if kind == "imgcls":
        labels = cfg.num_labels()
        b.add("head", h * labels + labels)
        b.node("classifier", f"classifier[{labels}]", (labels,))
    elif kind == "base" and cfg.model_type == "vit" and cfg.bool("add_pooling_layer", default=True):
        out = cfg.int("pooler_output_size", default=h) or h
        b.add("pooler", h * out + out)
        b.node("pooler", "pooler", (out,))


def vision_style(cfg: Cfg) -> str:
    mt = cfg.model_type
    if mt.startswith("clip") or mt in ("", "llava_vision"):
        return "clip"
    if mt.startswith("siglip") or "idefics" in mt or mt.startswith("smolvlm"):
        return "siglip"
    if mt == "pixtral":
        return "pixtral"
    return "vit"


# Composites whose projector is LLaVA's linear-GELU-linear MLP (the generic branch below).
_LLAVA_PROJECTOR = {"llava", "llava_next", "llava_onevision", "vipllava", "llava_next_video", "aya_vision",
                    "internvl", "llava_llama", "llava_mistral", "llava_qwen"}


def add_projector(cfg: Cfg, b: Build, vh: int, th: int) -> None:
    """The layer that maps vision features into the language model's space."""
    mt = cfg.model_type
    if mt.startswith(("qwen2", "qwen3")):  # the patch merger inside the vision tower is the projector
        return
    b.tower = "projector"
    if mt == "gemma3":
        b.add("projector", vh * th + vh)
    elif mt in ("idefics3", "smolvlm") or cfg.has("pixel_shuffle_factor"):
        # a pixel shuffle of scale² patches, then one bias-free linear (ModernVBERT: pixel_shuffle_factor)
        scale = cfg.int("pixel_shuffle_factor", "scale_factor", default=2, minimum=1) or 1
        b.add("projector", vh * scale * scale * th)
    elif mt == "mistral3":
        m = cfg.int("spatial_merge_size", default=2, minimum=1) or 1
        bias = cfg.bool("multimodal_projector_bias")
        b.add("projector", vh + vh * m * m * vh + vh * th + th * th + (2 * th if bias else 0))
    elif mt == "got_ocr2":  # two stride-2 3x3 convolutions (no bias) up to the text width, then a linear
        b.add("projector", vh * 2 * vh * 9 + 2 * vh * th * 9 + th * th + th)
    elif mt == "paligemma":
        proj = cfg.int("projection_dim", default=th) or th
        b.add("projector", vh * proj + proj)
    else:
        if mt not in _LLAVA_PROJECTOR:
            b.guess(f"projector of {mt or '(no model_type)'} (counted as LLaVA's two-layer MLP)")
        bias = cfg.bool("multimodal_projector_bias", default=True)
        b.add("projector", vh * th + th * th + (2 * th if bias else 0))
        if mt in ("llava_next", "llava_onevision"):
            b.add("projector", th)
    b.tower = None
    b.node("multi_modal_projector", f"projector[{vh}->{th}]", (b.seq, th))


def build_qwen_vision(cfg: Cfg, b: Build, prefix: str) -> int:
    """Qwen2-VL / Qwen2.5-VL vision encoder with its patch merger; returns the merger's output size."""
    if cfg.has("deepstack_visual_indexes") or cfg.model_type.startswith("qwen3"):
        return _qwen3_vision(cfg, b, prefix)
    v25 = not cfg.has("embed_dim")
    e = cfg.int("embed_dim", default=None, minimum=1) or cfg.need("hidden")
    out = cfg.int("out_hidden_size", default=None, minimum=1) or cfg.need("hidden") if v25 else cfg.need("hidden")
    n, nh = cfg.need("layers"), cfg.need("heads")
    b.divides(nh, e, "num_heads", "the vision width", prefix)
    p = cfg.int("patch_size", default=14, minimum=1) or 14
    t = cfg.int("temporal_patch_size", default=2, minimum=1) or 2
    chans = cfg.int("in_channels", "in_chans", default=3, minimum=1) or 3
    m = cfg.int("spatial_merge_size", default=2, minimum=1) or 2
    b.add("embeddings", chans * t * p * p * e)
    b.node(f"{prefix}.patch_embed", f"conv3d[{chans}->{e} k{t}x{p}x{p}]", (b.seq, e))
    attn = attention_linears(e, nh, nh, e // nh, qkv_bias=True, o_bias=True, fused="qkv", names=("qkv", "qkv", "qkv", "proj"))
    if v25:
        inter = cfg.concept("ffn", minimum=1) or 4 * e
        mlp = ffn_linears(e, inter, gated=True, bias=True)
        norms = 2 * e
    else:
        inter = int((cfg.float("mlp_ratio") or 4) * e)
        mlp = ffn_linears(e, inter, gated=False, bias=True, names=("fc1", "fc2"))
        norms = 4 * e
    layer = Layer(f"attn[mha {nh}x{e // nh}]", f"mlp[{'glu' if v25 else 'plain'} {inter}]", attn + mlp)
    layer.more("norms", norms)
    b.stack("vision", f"{prefix}.blocks", [layer] * n, hidden=e, intermediate=inter,
            attention=AttentionSpec(nh, nh, e // nh, ("full",) * n), shape=(b.seq, e), gated=v25)
    merged = e * m * m
    b.add("norms", e if v25 else 2 * e)
    b.add("projector", merged * merged + merged + merged * out + out)
    b.node(f"{prefix}.merger", f"patch_merger[{merged}->{out}]", (b.seq, out))
    return out


def _pair(cfg: Cfg, key: str, default: int) -> tuple[int, int]:
    """A size given as one number or as [height, width]."""
    raw = cfg.raw(key)
    if isinstance(raw, (list, tuple)):
        vals = cfg.int_list(key) or []
        if len(vals) != 2 or min(vals) < 1:
            from hubwatch.estimator.config import ConfigError
            raise ConfigError(cfg.key(key), "expected a number or [height, width]")
        return vals[0], vals[1]
    v = cfg.int(key, default=default, minimum=1) or default
    return v, v


def _pixtral(cfg: Cfg, b: Build, prefix: str, h: int, n: int, nh: int, inter: int, chans: int, patch: int,
             patches: int) -> int:
    """Pixtral: RoPE vision transformer with RMS norms and a gated MLP, no biases, no position table."""
    hd = cfg.int("head_dim", default=h // nh, minimum=1) or 1
    shape = (patches, h)
    b.add("embeddings", chans * patch * patch * h)
    b.node(f"{prefix}.patch_conv", f"conv2d[{chans}->{h} k{patch}]", shape)
    b.add("norms", h)
    layer = Layer(f"attention[mha {nh}x{hd}]", f"mlp[glu {inter}]",
                  attention_linears(h, nh, nh, hd, qkv_bias=False, o_bias=False)
                  + ffn_linears(h, inter, gated=True, bias=False))
    layer.more("norms", 2 * h)
    b.stack("vision", f"{prefix}.transformer.layers", [layer] * n, hidden=h, intermediate=inter,
            attention=AttentionSpec(nh, nh, hd, ("full",) * n), shape=shape, gated=True)
    return h


def _qwen3_vision(cfg: Cfg, b: Build, prefix: str) -> int:
    """Qwen3-VL: learned position table, biased patch conv, plain MLP, and DeepStack mergers."""
    e, n, nh = cfg.need("hidden"), cfg.need("layers"), cfg.need("heads")
    out = cfg.int("out_hidden_size", default=e, minimum=1) or e
    inter = cfg.concept("ffn", minimum=1) or 4 * e
    p = cfg.int("patch_size", default=16, minimum=1) or 16
    t = cfg.int("temporal_patch_size", default=2, minimum=1) or 2
    chans = cfg.int("in_channels", default=3, minimum=1) or 3
    m = cfg.int("spatial_merge_size", default=2, minimum=1) or 2
    positions = cfg.int("num_position_embeddings", default=2304) or 0
    b.divides(nh, e, "num_heads", "hidden_size", prefix)
    b.add("embeddings", chans * t * p * p * e + e + positions * e)
    b.node(f"{prefix}.patch_embed", f"conv3d[{chans}->{e} k{t}x{p}x{p}]", (b.seq, e))
    attn = attention_linears(e, nh, nh, e // nh, qkv_bias=True, o_bias=True, fused="qkv",
                             names=("qkv", "qkv", "qkv", "proj"))
    layer = Layer(f"attn[mha {nh}x{e // nh}]", f"mlp[plain {inter}]",
                  attn + ffn_linears(e, inter, gated=False, bias=True, names=("linear_fc1", "linear_fc2")))
    layer.more("norms", 4 * e)
    b.stack("vision", f"{prefix}.blocks", [layer] * n, hidden=e, intermediate=inter,
            attention=AttentionSpec(nh, nh, e // nh, ("full",) * n), shape=(b.seq, e))
    merged = e * m * m
    mlp = merged * merged + merged + merged * out + out
    deep = len(cfg.int_list("deepstack_visual_indexes") or [])
    b.add("projector", 2 * e + mlp + deep * (2 * merged + mlp))
    b.node(f"{prefix}.merger", f"patch_merger[{merged}->{out}]+deepstack x{deep}", (b.seq, out))
    return out
