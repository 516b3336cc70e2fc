"""Gemma-3n's text decoder (MatFormer): a feed-forward width per layer (`intermediate_size` as a list), AltUp
(`altup_num_inputs` parallel streams with per-layer prediction/correction coefficients and a router, plus the
model-level projections into and out of the extra streams), LAuReL (a rank-`laurel_rank` residual beside
attention), per-layer input embeddings (`hidden_size_per_layer_input` per layer, gated in each layer) and KV
sharing (the last `num_kv_shared_layers` layers reuse earlier keys and values: no K/V projections or K norm)."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, ffn_linears, lin
from hubwatch.estimator.config import LIMITS, Cfg, ConfigError
from hubwatch.estimator.architectures.decoder_only.decoders import layer_types
from hubwatch.estimator.params.heads import add_head, head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_gemma3n"]


def _widths(cfg: Cfg, n: int) -> list[int]:
    """`intermediate_size`: one width for every layer, or one per layer (the config's own rule)."""
    if isinstance(cfg.raw("intermediate_size"), (list, tuple)):
        widths = cfg.int_list("intermediate_size") or []
        if len(widths) != n:
            raise ConfigError(cfg.key("intermediate_size"),
                              f"lists {len(widths)} widths, num_hidden_layers is {n}")
        return widths
    return [cfg.need("ffn")] * n


def _types(cfg: Cfg, n: int) -> tuple[str, ...]:
    """Sliding or full attention per layer; unlisted, every fifth layer is full (Gemma3nTextConfig's rule)."""
    if cfg.has("layer_types"):
        return layer_types(cfg, n)
    return tuple("full" if (i + 1) % 5 == 0 else "sliding" for i in range(n))


def build_gemma3n(cfg: Cfg, b: Build) -> None:
    """Every layer: attention with Q/K norms (V's norm has no weight), a gated MLP of its own width, four
    sandwich norms, AltUp's coefficients and router, LAuReL and the per-layer input gate; shared-KV layers keep
    only Q and O. Around the stack: the per-layer embedding table and its projection from the hidden state, and
    AltUp's `altup_num_inputs - 1` projections in and as many out."""
    h, n, nh, vocab = cfg.need("hidden"), cfg.need("layers"), cfg.need("heads"), cfg.need("vocab")
    nkv = cfg.concept("kv_heads", minimum=1) or nh
    hd = cfg.concept("head_dim", minimum=1) or h // nh
    b.divides(nkv, nh, "num_key_value_heads", "num_attention_heads")
    bias = cfg.bool("attention_bias")
    widths = _widths(cfg, n)
    types = _types(cfg, n)
    b.check(len(types) == n, f"layer_types lists {len(types)} layers, num_hidden_layers is {n}")
    streams = cfg.int("altup_num_inputs", default=4, minimum=1) or 1
    cfg.int("altup_active_idx", default=0)
    cfg.bool("altup_correct_scale", default=True)  # correct_output_scale exists either way
    rank = cfg.int("laurel_rank", default=64) or 0
    per_layer = cfg.int("hidden_size_per_layer_input", default=256, limit=LIMITS["hidden"]) or 0
    rows = cfg.int("vocab_size_per_layer_input", default=262_144, limit=LIMITS["vocab"]) or 0
    shared = cfg.int("num_kv_shared_layers", default=15) or 0
    b.check(shared <= n, f"num_kv_shared_layers ({shared}) exceeds num_hidden_layers ({n})")
    cfg.raw("activation_sparsity_pattern")  # a top-k of activations at run time: no weights
    cfg.float("altup_coef_clip")  # a clamp on the coefficients at run time
    b.vocab = vocab
    b.max_pos = cfg.concept("max_pos", minimum=1)
    shape = (b.seq, h)
    b.embed("model.embed_tokens", vocab, h, shape)
    b.embed("model.embed_tokens_per_layer", rows, n * per_layer, shape)
    around = rows * n * per_layer + h * n * per_layer + per_layer + 2 * (streams - 1) * h * h
    b.add("per_layer", h * n * per_layer + per_layer)
    b.add("altup", 2 * (streams - 1) * h * h)
    b.node("model.altup_projections", f"altup[{streams} streams]", shape)
    cache: dict[tuple[int, bool, str], Layer] = {}
    layers: list[Layer] = []
    first_shared = n - shared
    for i in range(n):
        reuse = i >= first_shared
        key = (widths[i], reuse, types[i])
        layer = cache.get(key)
        if layer is None:
            attn = [("attention", lin("q_proj", h, nh * hd, bias))]
            if not reuse:
                attn += [("attention", lin("k_proj", h, nkv * hd, bias)),
                         ("attention", lin("v_proj", h, nkv * hd, bias))]
            attn.append(("attention", lin("o_proj", nh * hd, h, bias)))
            layer = Layer(f"self_attn[{nh}/{nkv}x{hd}{', shared kv' if reuse else ''}]"
                          + ("[sliding]" if types[i] == "sliding" else ""), f"mlp[glu {widths[i]}]",
                          attn + ffn_linears(h, widths[i], gated=True, bias=False))
            layer.more("attention", hd if reuse else 2 * hd)
            layer.linears += [("altup", lin("correction_coefs", streams, streams)),
                              ("altup", lin("prediction_coefs", streams, streams * streams)),
                              ("altup", lin("modality_router", h, streams))]
            layer.more("altup", 2 * h)  # correct_output_scale, router_norm
            if rank:
                layer.linears += [("laurel", lin("linear_left", h, rank)), ("laurel", lin("linear_right", rank, h))]
                layer.more("norms", h)
            if per_layer:
                layer.linears += [("per_layer", lin("per_layer_input_gate", h, per_layer)),
                                  ("per_layer", lin("per_layer_projection", per_layer, h))]
                layer.more("norms", h)
            layer.more("norms", 4 * h)
            cache[key] = layer
        layers.append(layer)
    window = cfg.int("sliding_window", default=None, minimum=0)
    b.stack("decoder", "model.layers", layers, hidden=h, intermediate=max(widths), shape=shape, gated=True,
            attention=AttentionSpec(nh, nkv, hd, types, window if "sliding" in types else None),
            extra_params=around)
    b.add("norms", h)
    b.node("model.norm", "norm[rms]", shape)
    b.final_norm = True
    add_head(cfg, b, head_kind(cfg, default="lm"), h, vocab, tie=cfg.bool("tie_word_embeddings", default=True),
             bias=False, family="decoder")
