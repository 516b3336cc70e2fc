"""Decoder-only language models (GPT/Llama-likes, MoE, MLA, hybrid conv/attention stacks)."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, attention_linears, ffn_linears, lin, norm_params
from hubwatch.estimator.config import LIMITS, Cfg, ConfigError
from hubwatch.estimator.params.heads import add_head, head_kind
from hubwatch.estimator.architectures.decoder_only.hybrid import LINEAR_KINDS, linear_attention_mixer, mamba1_mixer, mamba2_mixer, mixer_kinds
from hubwatch.estimator.architectures.decoder_only.moe import MoE, jetmoe_layer, moe_layers, moe_spec
from hubwatch.estimator.architectures.decoder_only.profiles import DecoderProfile, profile_for
from hubwatch.estimator.params.spec import AttentionSpec, LinearSpec

__all__ = ["build_decoder", "build_xlnet", "layer_types", "mla_attention"]


def _kv_heads(cfg: Cfg, nh: int) -> int:
    if cfg.model_type == "chatglm" and not cfg.bool("multi_query_attention"):
        return nh
    if cfg.model_type in ("falcon", "RefinedWebModel") and not cfg.bool("new_decoder_architecture"):
        return 1 if cfg.bool("multi_query", default=True) else nh
    kv = cfg.concept("kv_heads", minimum=1)
    if kv is not None:
        return kv
    if cfg.bool("multi_query", default=cfg.model_type == "gpt_bigcode"):
        return 1
    return nh


def _ffn(cfg: Cfg, p: DecoderProfile, h: int) -> int:
    ffn = cfg.concept("ffn", minimum=1)
    if ffn is None and cfg.has("expansion_ratio"):
        ffn = int((cfg.float("expansion_ratio") or 4) * h)
    if ffn is None:
        ffn = p.ffn_default * h
    if p.ffn_halved:
        ffn //= 2
    if cfg.bool("block_auto_adjust_ff_dim"):  # LFM2: 2/3 of the size, scaled, rounded up to a multiple
        ffn = int(2 * ffn / 3)
        ffn = int((cfg.float("block_ffn_dim_multiplier") or 1.0) * ffn)
        mult = cfg.int("block_multiple_of", default=1, minimum=1) or 1
        ffn = mult * ((ffn + mult - 1) // mult)
    return ffn


def layer_types(cfg: Cfg, n: int) -> tuple[str, ...]:
    """Per layer: full, sliding or none (no KV cache: conv/linear-attention layers)."""
    names = cfg.str_list("layer_types")
    if names:
        table = {"full_attention": "full", "sliding_attention": "sliding", "attention": "full",
                 "chunked_attention": "sliding"}
        return tuple(table.get(t, "none") for t in names[:n])
    full_idx = cfg.int_list("full_attn_idxs")
    if full_idx is not None:
        return tuple("full" if i in set(full_idx) else "none" for i in range(n))
    window = cfg.int("sliding_window", default=None)
    if not window or (cfg.has("use_sliding_window") and not cfg.bool("use_sliding_window")):
        return ("full",) * n
    pattern = cfg.int("sliding_window_pattern", default=None)
    if cfg.model_type.startswith("gemma2"):
        pattern = 2
    if pattern:
        return tuple("full" if (i + 1) % pattern == 0 else "sliding" for i in range(n))
    return ("sliding",) * n


def _attention(cfg: Cfg, p: DecoderProfile, h: int, nh: int, nkv: int, hd: int) -> tuple[list[tuple[str, LinearSpec]], int, str]:
    """Attention linears, its other parameters (norms, sinks) and a node type."""
    if cfg.has("kv_lora_rank"):
        return _mla(cfg, h, nh)
    linears = attention_linears(h, nh, nkv, hd, qkv_bias=p.qkv_bias, o_bias=p.o_bias, fused=p.fused_qkv,
                                names=(p.names[0], p.names[1], p.names[2], p.names[3]))
    if p.attn_gate and not p.fused_qkv:
        linears[0] = ("attention", lin(p.names[0], h, 2 * nh * hd, p.qkv_bias))
    vd = cfg.int("v_head_dim", default=None, minimum=1)
    if vd is not None and vd != hd and not p.fused_qkv:  # values narrower than queries and keys (MiMo-V2-Flash)
        linears[2] = ("attention", lin(p.names[2], h, nkv * vd, p.qkv_bias))
        linears[3] = ("attention", lin(p.names[3], nh * vd, h, p.o_bias))
    extra = {"head": 2 * hd, "head_ln": 4 * hd, "full": (nh + nkv) * hd}.get(p.qk_norm, 0)
    if p.sinks:
        extra += nh
    kind = "mha" if nkv == nh else ("mqa" if nkv == 1 else "gqa")
    return linears, extra, f"self_attn[{kind} {nh}/{nkv}x{hd}]"


def mla_attention(cfg: Cfg, h: int, nh: int) -> tuple[list[tuple[str, LinearSpec]], int, str]:
    """Multi-head latent attention's linears, its norm parameters and a node type (for other builders)."""
    return _mla(cfg, h, nh)


def _mla(cfg: Cfg, h: int, nh: int) -> tuple[list[tuple[str, LinearSpec]], int, str]:
    """Multi-head latent attention: low-rank query and joint key/value projections."""
    bias = cfg.bool("attention_bias")
    rank_kv = cfg.int("kv_lora_rank", minimum=1) or 1
    rope = cfg.int("qk_rope_head_dim", default=64) or 0
    nope = cfg.int("qk_nope_head_dim", default=128) or 0
    v = cfg.int("v_head_dim", default=nope) or 0
    rank_q = cfg.int("q_lora_rank", default=None, minimum=1)
    qk = cfg.int("qk_head_dim", default=nope + rope, minimum=1) or nope + rope  # transformers sizes q with it
    out: list[tuple[str, LinearSpec]] = []
    extra = rank_kv
    if rank_q:
        out += [("attention", lin("q_a_proj", h, rank_q, bias)), ("attention", lin("q_b_proj", rank_q, nh * qk))]
        extra += rank_q
    else:
        out.append(("attention", lin("q_proj", h, nh * qk)))
    out += [("attention", lin("kv_a_proj_with_mqa", h, rank_kv + rope, bias)),
            ("attention", lin("kv_b_proj", rank_kv, nh * (nope + v))),
            ("attention", lin("o_proj", nh * v, h, bias))]
    return out, extra, f"self_attn[mla {nh}x{qk} kv_rank={rank_kv}]"


def _conv_layer(cfg: Cfg, h: int) -> Layer:
    """A gated short-convolution mixer (LFM2-style hybrid layers)."""
    bias = cfg.bool("conv_bias")
    kernel = cfg.int("conv_L_cache", "conv_kernel", "d_conv", default=3) or 3
    layer = Layer("conv[short-conv]", "", [("conv", lin("in_proj", h, 3 * h, bias)), ("conv", lin("out_proj", h, h, bias))])
    layer.more("conv", h * kernel + (h if bias else 0))
    return layer


def _dsa_indexer(cfg: Cfg, h: int, attention: tuple[list[tuple[str, LinearSpec]], int, str]
                 ) -> tuple[list[tuple[str, LinearSpec]], int, str]:
    """The lightning indexer of DeepSeek sparse attention: queries from the q LoRA rank, one key head with a
    LayerNorm, and per-head weights."""
    linears, extra, kind = attention
    heads = cfg.int("index_n_heads", minimum=1) or 1
    dim = cfg.int("index_head_dim", default=128, minimum=1) or 128
    rank = cfg.int("q_lora_rank", default=None, minimum=1) or h
    return (linears + [("attention", lin("indexer.wq_b", rank, heads * dim)), ("attention", lin("indexer.wk", h, dim)),
                       ("attention", lin("indexer.weights_proj", h, heads))], extra + 2 * dim, kind + "+indexer")


def _per_layer_head_dims(cfg: Cfg, n: int) -> dict[int, int]:
    """Gemma-4's per_layer_config: {"05": {"head_dim": 512}, …} overrides the head width of single layers."""
    table = cfg.sub("per_layer_config")
    out: dict[int, int] = {}
    if table is None:
        return out
    for key in table.data:
        entry = table.sub(key)
        if entry is None or not key.isdigit() or int(key) >= n:
            raise ConfigError(table.key(key), f"expected a layer index below {n} with an object of overrides")
        hd = entry.int("head_dim", default=None, minimum=1)
        if hd is not None:
            out[int(key)] = hd
    return out


def _flatten(cfg: Cfg) -> Cfg:
    """DBRX/MPT-style configs nest attention and feed-forward settings; read them as top-level keys."""
    nested = [sub for key in ("attn_config", "ffn_config") if (sub := cfg.sub(key)) is not None]
    if not nested:
        return cfg
    data: dict[str, object] = {}
    for sub in nested:
        data.update(sub.data)
    data.update(cfg.data)
    return Cfg(data, cfg.path)


def build_decoder(cfg: Cfg, b: Build, *, prefix: str = "model", name: str = "decoder",
                  head: str | None = None) -> None:
    """Adds a decoder-only language model (embeddings, layers, final norm, head) to the build."""
    cfg = _flatten(cfg)
    if cfg.model_type in ("falcon", "RefinedWeb", "RefinedWebModel"):
        from hubwatch.estimator.architectures.decoder_only.falcon import falcon_profile
        p, known = falcon_profile(cfg), True
    else:
        p, known = profile_for(cfg)
    if not known:
        b.guess(f"generic decoder (model_type {cfg.model_type or '(none)'} has no profile: norms, biases, "
                "gating and tying read from the keys)",
                f"unknown architecture {cfg.model_type or '(no model_type)'}: generic decoder estimate")
    h, n_layers = cfg.need("hidden"), cfg.need("layers")
    nh_given = cfg.concept("heads", minimum=1)
    if nh_given is None and known:
        nh_given = cfg.need("heads")
    if nh_given is None:  # MHA parameter counts do not depend on the head count
        b.notes.append("no attention head count: assumed 64-wide heads")
    nh = nh_given or max(h // 64, 1)
    nkv = _kv_heads(cfg, nh)
    explicit_hd = cfg.concept("head_dim", minimum=1)
    if explicit_hd is None:
        b.divides(nh, h, "num_attention_heads", "hidden_size")
    b.divides(nkv, nh, "num_key_value_heads", "num_attention_heads")
    hd = explicit_hd or max(h // nh, 1)
    vocab = cfg.need("vocab")
    b.vocab, seq = vocab, b.seq
    shape = (seq, h)
    max_pos = cfg.concept("max_pos", minimum=1)
    b.max_pos = max_pos
    b.embed(f"{prefix}.embed_tokens", vocab, h, shape)
    embed_total = vocab * h
    if p.positions == "learned":
        rows = (max_pos or 2048) + p.pos_offset
        b.embed(f"{prefix}.embed_positions", rows, h, shape, "position_embedding")
        embed_total += rows * h
        b.check(max_pos is None or seq <= max_pos, f"sequence length {seq} exceeds the learned position table ({max_pos})")
    if p.embed_norm:
        b.add("norms", norm_params(p.norm, h))
    ffn = _ffn(cfg, p, h)
    dense_size = cfg.int("intermediate_size_mlp", default=ffn, minimum=1) or ffn
    types = layer_types(cfg, n_layers)
    b.check(len(types) == n_layers, f"layer_types lists {len(types)} layers, num_hidden_layers is {n_layers}")
    base_attention = attn_lin, attn_extra, attn_type = _attention(cfg, p, h, nh, nkv, hd)
    moe: MoE | None = moe_spec(cfg, h, ffn, p)
    norms = p.layer_norms * norm_params(p.norm, h)
    dense_ffn = ffn_linears(h, dense_size, gated=p.gated, bias=p.mlp_bias, fused_gate=p.fused_gate,
                            names=(p.names[4], p.names[5], p.names[6]))
    ffn_type = f"mlp[{'glu' if p.gated else 'plain'} {dense_size}]"
    cache: dict[tuple[str, str, int, bool], Layer] = {}
    sparse = moe_layers(cfg, n_layers, moe) if moe else [False] * n_layers
    kinds = mixer_kinds(cfg, n_layers)
    variants = {k[15:] for k in kinds or () if k.startswith("attention-like:")}
    if variants == {"indexed_attention"} and cfg.has("index_n_heads") and "attention" not in (kinds or ()):
        # DeepSeek sparse attention: every attention layer carries a lightning indexer
        base_attention = attn_lin, attn_extra, attn_type = _dsa_indexer(cfg, h, base_attention)
        variants = set()
    for variant in sorted(variants):
        b.guess(f"layer type {variant!r} (counted as the model's plain attention)")
    if kinds is not None:
        kinds = ["attention" if k.startswith("attention-like:") else k for k in kinds]
        types = tuple("none" if k not in ("attention", "parallel")
                      else (types[i] if i < len(types) and types[i] != "none" else "full") for i, k in enumerate(kinds))
    head_dims = _per_layer_head_dims(cfg, n_layers)
    per_layer = cfg.int("hidden_size_per_layer_input", default=0, limit=LIMITS["hidden"]) or 0
    if per_layer:  # Gemma-4: a per-layer token embedding, projected from the hidden state and gated in each layer
        rows = cfg.int("vocab_size_per_layer_input", default=vocab, minimum=1, limit=LIMITS["vocab"]) or vocab
        b.embed(f"{prefix}.embed_tokens_per_layer", rows, n_layers * per_layer, shape)
        b.add("embeddings", h * n_layers * per_layer + per_layer)
        embed_total += rows * n_layers * per_layer + h * n_layers * per_layer + per_layer
    # Each layer's kind: its mixer, attention type, head width where it differs, and whether its FFN is
    # sparse. Layers of one kind share one Layer, built (in order of first appearance) once.
    mixers = types[:n_layers] + ("full",) * (n_layers - len(types))
    defaults = ["conv" if mixer == "none" else "attention" for mixer in mixers] if "none" in mixers \
        else ["attention"] * n_layers
    kind_of = defaults if kinds is None else kinds[:n_layers] + defaults[len(kinds):]
    widths = [head_dims.get(i, hd) for i in range(n_layers)] if head_dims else [hd] * n_layers
    keys = list(zip(kind_of, mixers, widths, sparse))  # (kind, mixer, head width, sparse FFN?) per layer
    if cfg.model_type == "jetmoe":  # mixture of attention heads and of MLP experts, in every layer
        keys = [("jetmoe", "full", hd, True)] * n_layers
        cache[keys[0]] = jetmoe_layer(cfg, h, nkv, hd, norms)
    for key in dict.fromkeys(keys):
        if key not in cache:
            kind, mixer, layer_hd, is_sparse = key
            if layer_hd != hd:
                attn_lin, attn_extra, attn_type = _attention(cfg, p, h, nh, nkv, layer_hd)
            else:
                attn_lin, attn_extra, attn_type = base_attention
            if kind == "conv":
                layer = _conv_layer(cfg, h)
            elif kind == "mamba2":
                layer = mamba2_mixer(cfg, h)
            elif kind == "mamba1":
                layer = mamba1_mixer(cfg, h)
            elif kind in LINEAR_KINDS:
                layer = linear_attention_mixer(cfg, h, kind)
            elif kind.startswith("unknown:"):  # a layer type no builder knows: counted as a Mamba-2 mixer
                b.guess(f"layer type {kind[8:]!r} (counted as a default Mamba-2 mixer)")
                layer = mamba2_mixer(cfg, h)
            elif kind == "parallel":
                layer = mamba2_mixer(cfg, h)
                layer.mixer = attn_type + "+" + layer.mixer
                layer.linears = list(attn_lin) + layer.linears
                layer.more("attention", attn_extra)
            else:
                layer = Layer(attn_type + ("[sliding]" if mixer == "sliding" else ""), "", list(attn_lin))
                layer.more("attention", attn_extra)
            if is_sparse and moe is not None:
                layer.linears += moe.linears
                layer.more("router", moe.extra)
                layer.ffn = moe.node_type
            else:
                layer.linears += dense_ffn
                layer.ffn = ffn_type
            layer.more("norms", norms)
            if per_layer:
                layer.linears += [("per_layer", lin("per_layer_input_gate", h, per_layer)),
                                  ("per_layer", lin("per_layer_projection", per_layer, h))]
                layer.more("norms", h)
            if p.sub_norms:
                layer.more("norms", h + (dense_size if not (is_sparse and moe is not None) else 0))
            cache[key] = layer
    layers = [cache[key] for key in keys]
    window = cfg.int("sliding_window", default=None, minimum=0)
    attention = AttentionSpec(nh, nkv, hd, types, window if "sliding" in types else None,
                              cfg.int("kv_lora_rank", default=None), cfg.int("qk_rope_head_dim", default=None)
                              if cfg.has("kv_lora_rank") else None,
                              cfg.int("v_head_dim", default=None) if cfg.has("kv_lora_rank") else None)
    b.stack(name, f"{prefix}.layers", layers, hidden=h, intermediate=ffn, attention=attention, shape=shape,
            gated=p.gated, num_experts=moe.experts if moe else 0, experts_per_token=moe.top_k if moe else 0,
            extra_params=embed_total)
    if p.final_norm and not (cfg.model_type == "opt" and (not cfg.bool("do_layer_norm_before", default=True)
                                                          or cfg.bool("_remove_final_layer_norm"))):
        b.add("norms", norm_params(p.norm, h))
        b.node(f"{prefix}.norm", f"norm[{p.norm}]", shape)
        b.final_norm = True
    proj = cfg.int("word_embed_proj_dim", default=None)
    if cfg.model_type == "opt" and proj and proj != h:  # OPT-350m: embeddings live in a smaller space
        b.components["embeddings"] -= (vocab * h) - vocab * proj
        b.embedding_params -= (vocab * h) - vocab * proj
        b.add("embeddings", 2 * h * proj)
        h = proj
    add_head(cfg, b, head or head_kind(cfg, default="lm"), h, vocab, tie=p.tie, bias=p.lm_head_bias,
             family="decoder", prefix=prefix)


def build_xlnet(cfg: Cfg, b: Build) -> None:
    """XLNet: two-stream relative attention (q, k, v, o and the relative-position projection r, bias-free,
    with three per-head biases and segment embeddings), a biased MLP, a mask embedding, a tied LM head
    with its bias."""
    h, n, nh = cfg.need("hidden"), cfg.need("layers"), cfg.need("heads")
    hd = cfg.int("d_head", default=None, minimum=1) or h // nh
    ffn = cfg.int("d_inner", default=None, minimum=1) or cfg.concept("ffn", minimum=1) or 4 * h
    vocab = cfg.need("vocab")
    b.vocab, shape = vocab, (b.seq, h)
    b.embed("transformer.word_embedding", vocab, h, shape)
    b.add("embeddings", h)  # mask_emb
    width = nh * hd
    layer = Layer(f"rel_attn[two-stream {nh}x{hd}]", f"mlp[plain {ffn}]",
                  [("attention", lin(name, h, width)) for name in ("q", "k", "v", "r")]
                  + [("attention", lin("o", width, h))]
                  + ffn_linears(h, ffn, gated=False, bias=True, names=("layer_1", "layer_2")))
    layer.more("attention", 3 * width + 2 * width)  # r_r/r_s/r_w biases, segment embeddings
    layer.more("norms", 2 * 2 * h)
    b.stack("decoder", "transformer.layer", [layer] * n, hidden=h, intermediate=ffn,
            attention=AttentionSpec(nh, nh, hd, ("full",) * n), shape=shape, extra_params=vocab * h)
    add_head(cfg, b, head_kind(cfg, default="lm"), h, vocab, tie=cfg.bool("tie_word_embeddings", default=True),
             bias=True, family="decoder", prefix="transformer")
