"""Mllama-style vision-language models: tiled vision encoder (local + gated global layers) and a text
decoder with gated cross-attention layers inserted at listed positions."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, attention_linears, ffn_linears
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.heads import add_head, head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_mllama"]


def _vision(cfg: Cfg, b: Build) -> int:
    h, nh = cfg.need("hidden"), cfg.need("heads")
    local = cfg.need("layers")
    glob = cfg.int("num_global_layers", default=8) or 0
    inter = cfg.concept("ffn", minimum=1) or 4 * h
    size = cfg.int("image_size", default=448, minimum=1) or 448
    patch = cfg.int("patch_size", default=14, minimum=1) or 14
    tiles = cfg.int("max_num_tiles", default=4, minimum=1) or 1
    ratios = cfg.raw("supported_aspect_ratios")
    ratio_ids = (len(ratios) if isinstance(ratios, list) else 8) + 1
    b.divides(nh, h, "attention heads", "hidden_size", "vision_config")
    tokens = (size // patch) ** 2 + 1
    shape = (tiles * tokens, h)
    b.add("embeddings", h + 3 * patch * patch * h + 1 + tokens * h + ratio_ids * tiles * tokens * h
          + 2 * (1 + ratio_ids * tiles * h))
    b.node("vision_model.embeddings", f"tiled_patch_embedding[{tiles}x{tokens}x{h}]", shape)
    b.add("norms", 4 * h)
    linears = attention_linears(h, nh, nh, h // nh, qkv_bias=False, o_bias=False)
    linears += ffn_linears(h, inter, gated=False, bias=True, names=("fc1", "fc2"))
    plain = Layer(f"self_attn[mha {nh}x{h // nh}]", f"mlp[plain {inter}]", linears)
    plain.more("norms", 4 * h)
    gated = Layer(plain.mixer + "[gated]", plain.ffn, linears)
    gated.more("norms", 4 * h)
    gated.more("attention", 2)
    spec = AttentionSpec(nh, nh, h // nh, ("full",) * (local + glob))
    b.stack("vision", "vision_model.layers", [plain] * local + [gated] * glob, hidden=h, intermediate=inter,
            attention=spec, shape=shape)
    return cfg.int("vision_output_dim", default=h * 5, minimum=1) or h


def build_mllama(cfg: Cfg, text: Cfg, vision: Cfg, b: Build) -> None:
    b.tower = "vision_tower"
    vout = _vision(vision, b)
    b.tower = None
    h, n, nh = text.need("hidden"), text.need("layers"), text.need("heads")
    nkv = text.concept("kv_heads", minimum=1) or nh
    b.divides(nh, h, "num_attention_heads", "hidden_size", "text_config")
    b.divides(nkv, nh, "num_key_value_heads", "num_attention_heads", "text_config")
    hd = h // nh
    inter = text.concept("ffn", minimum=1) or 4 * h
    vocab = text.need("vocab")
    b.vocab, b.max_pos = vocab, text.concept("max_pos")
    shape = (b.seq, h)
    b.embed("language_model.embed_tokens", vocab + 8, h, shape)
    attn = attention_linears(h, nh, nkv, hd, qkv_bias=False, o_bias=False)
    mlp = ffn_linears(h, inter, gated=True, bias=False)
    self_layer = Layer(f"self_attn[gqa {nh}/{nkv}x{hd}]", f"mlp[glu {inter}]", attn + mlp)
    self_layer.more("norms", 2 * h)
    cross = Layer(f"cross_attn[gqa {nh}/{nkv}x{hd} gated]", f"mlp[glu {inter}]", attn + mlp)
    cross.more("norms", 2 * h)
    cross.more("attention", 2 * hd + 2)
    where = set(text.int_list("cross_attention_layers") or [])
    layers = [cross if i in where else self_layer for i in range(n)]
    types = tuple("none" if i in where else "full" for i in range(n))
    b.stack("decoder", "language_model.layers", layers, hidden=h, intermediate=inter,
            attention=AttentionSpec(nh, nkv, hd, types, cross_attention=True), shape=shape, gated=True)
    b.add("norms", h)
    b.node("language_model.norm", "norm[rms]", shape)
    b.final_norm = True
    b.add("projector", vout * h + h)
    b.node("multi_modal_projector", f"projector[{vout}->{h}]", shape)
    add_head(cfg, b, head_kind(cfg, default="lm"), h, vocab, tie=text.bool("tie_word_embeddings"), bias=False,
             family="decoder")
