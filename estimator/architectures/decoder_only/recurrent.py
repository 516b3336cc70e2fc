"""Recurrent models: Zamba (Mamba layers and one shared attention block), Zamba2 (Mamba-2 layers and
`num_mem_blocks` shared attention blocks with per-use LoRA adapters), RecurrentGemma (Griffin) and RWKV (time
mixing and channel mixing, no attention weights)."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, attention_linears, ffn_linears, lin
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.heads import add_head, head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_recurrent"]


def build_recurrent(cfg: Cfg, b: Build) -> None:
    if cfg.model_type == "zamba":
        _zamba(cfg, b)
    elif cfg.model_type == "zamba2":
        _zamba2(cfg, b)
    elif cfg.model_type == "rwkv":
        _rwkv(cfg, b)
    else:
        _recurrent_gemma(cfg, b)


def _start(cfg: Cfg, b: Build) -> tuple[int, int, int, tuple[int, ...]]:
    h, n, vocab = cfg.need("hidden"), cfg.need("layers"), cfg.need("vocab")
    b.vocab = vocab
    b.max_pos = cfg.concept("max_pos", minimum=1)
    shape = (b.seq, h)
    b.embed("model.embed_tokens", vocab, h, shape)
    return h, n, vocab, shape


def _finish(cfg: Cfg, b: Build, h: int, vocab: int, shape: tuple[int, ...]) -> None:
    b.add("norms", h)
    b.node("model.final_norm", "norm[rms]", shape)
    b.final_norm = True
    add_head(cfg, b, head_kind(cfg, default="lm"), h, vocab, tie=cfg.bool("tie_word_embeddings", default=True),
             bias=False, family="decoder")


def _zamba_kinds(cfg: Cfg, n: int) -> list[str]:
    """'hybrid' (Mamba + the shared block) or Mamba per layer; the period rule of transformers' ZambaConfig
    when the config does not list them."""
    listed = cfg.str_list("layers_block_type")
    if listed:
        return ["hybrid" if t == "hybrid" else "mamba" for t in listed[:n]]
    period = cfg.int("attn_layer_period", default=6, minimum=1) or 6
    offset = cfg.int("attn_layer_offset", default=4) or 0
    head = ["mamba", "mamba", "hybrid"][:n]
    return head + ["hybrid" if i % period == offset else "mamba" for i in range(n - len(head))]


def _zamba(cfg: Cfg, b: Build) -> None:
    """Each layer a multi-head Mamba mixer; 'hybrid' layers first run ONE attention + MLP block shared by all
    of them (its input: the hidden state concatenated with the embeddings) through their own linear."""
    h, n, vocab, shape = _start(cfg, b)
    nh = cfg.need("heads")
    nkv = cfg.concept("kv_heads", minimum=1) or nh
    b.divides(nkv, nh, "num_key_value_heads", "num_attention_heads")
    attn_in = cfg.int("attention_hidden_size", default=2 * h, minimum=1) or 2 * h
    hd = cfg.int("attention_head_dim", default=attn_in // nh, minimum=1) or max(attn_in // nh, 1)
    inter = cfg.need("ffn")
    heads = cfg.int("n_mamba_heads", default=1, minimum=1) or 1
    inner = (cfg.int("mamba_expand", default=2, minimum=1) or 2) * h
    state = cfg.int("mamba_d_state", default=16, minimum=1) or 16
    kernel = cfg.int("mamba_d_conv", default=4, minimum=1) or 4
    rank = cfg.int("mamba_dt_rank", default=None, minimum=1) or -(-h // 16)
    b.divides(heads, inner, "n_mamba_heads", "the Mamba width (mamba_expand × hidden_size)")
    head_dim = inner // heads
    proj_bias, conv_bias = cfg.bool("mamba_proj_bias"), cfg.bool("mamba_conv_bias", default=True)
    mamba = Layer(f"mixer[mamba {heads} heads d_state={state}]", "", [
        ("ssm", lin("in_proj", h, 2 * inner, proj_bias)),
        ("ssm", lin("x_proj", head_dim, rank + 2 * state, count=heads)),
        ("ssm", lin("dt_proj", rank, head_dim, True, count=heads)),
        ("ssm", lin("out_proj", inner, h, proj_bias))])
    mamba.more("ssm", inner * kernel + (inner if conv_bias else 0) + inner * state + inner)
    mamba.more("norms", h)
    hybrid = Layer(f"shared_attn[{nh}/{nkv}x{hd}]+{mamba.mixer}", "mlp[shared gated]",
                   [*mamba.linears, ("attention", lin("linear", h, h))], dict(mamba.extra))
    kinds = _zamba_kinds(cfg, n)
    # The shared block: attention over [hidden, embeddings], gated MLP, two norms. Every hybrid layer builds one,
    # tied through ZambaModel._tied_weights_keys, which transformers applies only while tie_word_embeddings holds
    # (as for Zamba2): untied, each hybrid layer keeps its own (transformers 5.24.0 on the meta device).
    blocks = 1 if cfg.bool("tie_word_embeddings", default=True) else max(kinds.count("hybrid"), 1)
    shared = attention_linears(attn_in, nh, nkv, hd, qkv_bias=False, o_bias=False, out_dim=h)
    shared += ffn_linears(h, inter, gated=True, bias=False)
    shared_params = 0
    for component, spec in shared:
        b.add(component, spec.params * blocks)
        shared_params += spec.params * blocks
    b.add("norms", (attn_in + h) * blocks)
    b.node("model.shared_transformer", f"shared_block[x{blocks}, attn {attn_in}->{h}, mlp {inter}]", shape)
    # Most layers are Mamba only: the stack's width is the Mamba width, as for pure state-space models.
    b.stack("decoder", "model.layers", [hybrid if k == "hybrid" else mamba for k in kinds], hidden=h,
            intermediate=inner, attention=AttentionSpec(nh, nkv, hd, tuple("full" if k == "hybrid" else "none"
                                                                             for k in kinds)),
            shape=shape, extra_params=shared_params + (attn_in + h) * blocks)
    _finish(cfg, b, h, vocab, shape)


def _zamba2_kinds(cfg: Cfg) -> list[str]:
    """'hybrid' or Mamba-2 per layer, from `layers_block_type` (its length is the depth that is built); unlisted,
    Zamba2Config's own pattern (54 layers, a hybrid every sixth, then at 47 and 51)."""
    listed = cfg.str_list("layers_block_type")
    if listed is None:
        listed = (["mamba"] + (["mamba"] * 5 + ["hybrid"]) * 7 + ["mamba"] * 4 + ["hybrid"] + ["mamba"] * 3
                  + ["hybrid"] + ["mamba"] * 2)
    return ["hybrid" if t == "hybrid" else "mamba" for t in listed]


def _zamba2(cfg: Cfg, b: Build) -> None:
    """Every layer a Mamba-2 mixer (in_proj to the gate, the conv channels and one dt per head; a depthwise
    conv with bias; dt bias, A and D per head; a gated norm; out_proj); 'hybrid' layers first run one of
    `num_mem_blocks` shared blocks (attention over [hidden, embeddings] at twice the width, a fused gated MLP, two
    norms), cycled in hybrid order, then their own square linear. Each use of a shared block has its own LoRA
    adapter (rank `adapter_rank`) on the gate/up projection, and on Q, K and V with `use_shared_attention_adapter`.
    The widths transformers derives (attention_hidden_size, attention_head_dim, mamba_headdim, kv_channels) are
    recomputed from hidden_size as Zamba2Config does."""
    h, _, vocab, shape = _start(cfg, b)
    kinds = _zamba2_kinds(cfg)
    n = len(kinds)
    nh = cfg.need("heads")
    nkv = cfg.concept("kv_heads", minimum=1) or nh
    b.divides(nkv, nh, "num_key_value_heads", "num_attention_heads")
    attn_in, hd = 2 * h, 2 * h // nh
    for derived in ("attention_hidden_size", "attention_head_dim", "mamba_headdim", "kv_channels",
                    "num_query_groups"):
        cfg.int(derived)  # Zamba2Config overwrites these from hidden_size and the head counts
    inter = cfg.concept("ffn", minimum=1) or 4 * h
    bias = cfg.bool("add_bias_linear")
    cfg.bool("use_conv_bias", default=True)  # the conv keeps its bias whatever this says
    heads = cfg.int("n_mamba_heads", default=8, minimum=1) or 8
    inner = (cfg.int("mamba_expand", default=2, minimum=1) or 2) * h
    state = cfg.int("mamba_d_state", default=64, minimum=1) or 64
    kernel = cfg.int("mamba_d_conv", default=4, minimum=1) or 4
    groups = cfg.int("mamba_ngroups", default=1, minimum=1) or 1
    b.divides(heads, inner, "n_mamba_heads", "the Mamba width (mamba_expand × hidden_size)")
    b.divides(groups, inner, "mamba_ngroups", "the Mamba width (mamba_expand × hidden_size)")
    conv = inner + 2 * groups * state
    mamba = Layer(f"mixer[mamba2 {heads} heads d_state={state}]", "", [
        ("ssm", lin("in_proj", h, inner + conv + heads, bias)), ("ssm", lin("out_proj", inner, h, bias))])
    mamba.more("ssm", conv * kernel + conv + 3 * heads + inner)
    mamba.more("norms", h)
    hybrid = Layer(f"shared_attn[{nh}/{nkv}x{hd}]+{mamba.mixer}", "mlp[shared gated]",
                   [*mamba.linears, ("attention", lin("linear", h, h))], dict(mamba.extra))
    uses = kinds.count("hybrid")
    mem = cfg.int("num_mem_blocks", default=1, minimum=1) or 1
    # The shared blocks are tied through Zamba2Model._tied_weights_keys, which transformers applies only while
    # tie_word_embeddings holds: untied, every hybrid layer keeps a block of its own (block_id = its hybrid
    # index % num_mem_blocks), with that block's adapter slots (one per hybrid index of the same residue)
    tied = cfg.bool("tie_word_embeddings", default=True)
    blocks = min(mem, uses) if tied else uses
    rank = cfg.int("adapter_rank", default=128) or 0
    attn_adapters = cfg.bool("use_shared_attention_adapter")
    shared = attention_linears(attn_in, nh, nkv, hd, qkv_bias=False, o_bias=False, out_dim=h)
    shared += ffn_linears(h, inter, gated=True, bias=bias, fused_gate="gate_up_proj")
    shared_params = 0
    for component, spec in shared:
        b.add(component, spec.params * blocks)
        shared_params += spec.params * blocks
    b.add("norms", (attn_in + h) * blocks)
    slots = uses if tied else sum(len(range(j % mem, uses, mem)) for j in range(uses))
    adapters = slots * (rank * (h + 2 * inter) + (3 * 2 * rank * attn_in if attn_adapters else 0))
    b.add("adapters", adapters)
    b.node("model.shared_transformer", f"shared_block[x{blocks}, attn {attn_in}->{h}, mlp {inter}, "
                                       f"lora {rank} x{uses}]", shape)
    cfg.bool("use_mem_rope")  # rotary positions in the shared attention: no weights
    cfg.bool("use_mamba_kernels")  # the CUDA kernels or the PyTorch path: the same weights
    b.stack("decoder", "model.layers", [hybrid if k == "hybrid" else mamba for k in kinds], hidden=h,
            intermediate=inner, attention=AttentionSpec(nh, nkv, hd, tuple("full" if k == "hybrid" else "none"
                                                                             for k in kinds)),
            shape=shape, extra_params=shared_params + (attn_in + h) * blocks + adapters)
    _finish(cfg, b, h, vocab, shape)


def _recurrent_gemma(cfg: Cfg, b: Build) -> None:
    """Griffin: layers cycle through `block_types` (RG-LRU recurrent blocks or local attention), each with a
    gated MLP of half the intermediate size; biases on the MLP, output and recurrent projections."""
    h, n, vocab, shape = _start(cfg, b)
    nh = cfg.need("heads")
    nkv = cfg.concept("kv_heads", minimum=1) or nh
    hd = cfg.concept("head_dim", minimum=1) or h // nh
    b.divides(nkv, nh, "num_key_value_heads", "num_attention_heads")
    inter = cfg.need("ffn") // 2
    lru = cfg.int("lru_width", default=h, minimum=1) or h
    kernel = cfg.int("conv1d_width", default=4, minimum=1) or 4
    b.divides(nh, lru, "num_attention_heads", "lru_width")
    block = lru // nh
    mlp = ffn_linears(h, inter, gated=True, bias=True)
    attention = Layer(f"local_attn[{nh}/{nkv}x{hd}]", f"mlp[gated {inter}]",
                      attention_linears(h, nh, nkv, hd, qkv_bias=cfg.bool("attention_bias"), o_bias=True) + mlp)
    recurrent = Layer(f"rg_lru[{lru}]", f"mlp[gated {inter}]", [
        ("recurrent", lin("linear_y", h, lru, True)), ("recurrent", lin("linear_x", h, lru, True)),
        ("recurrent", lin("linear_out", lru, h, True)), *mlp])
    recurrent.more("recurrent", lru * kernel + lru + lru + 2 * (nh * block * block + lru))
    for layer in (attention, recurrent):
        layer.more("norms", 2 * h)
    cycle = cfg.str_list("block_types") or ["recurrent", "recurrent", "attention"]
    kinds = [cycle[i % len(cycle)] for i in range(n)]
    window = cfg.int("attention_window_size", default=None, minimum=1)
    b.stack("decoder", "model.layers", [attention if k == "attention" else recurrent for k in kinds], hidden=h,
            intermediate=inter, attention=AttentionSpec(nh, nkv, hd, tuple(
                ("sliding" if window else "full") if k == "attention" else "none" for k in kinds), window),
            shape=shape, gated=True)
    _finish(cfg, b, h, vocab, shape)


def _rwkv(cfg: Cfg, b: Build) -> None:
    """RWKV (v4): per block a time-mixing step (key, value, receptance to `attention_hidden_size` and back, a
    decay and a bonus per channel, three mixing vectors) and a channel-mixing step (key up to the intermediate
    size, value down, a square receptance gate, two mixing vectors); LayerNorms with biases, and one more at the
    first block's input; the head is its own matrix unless tied."""
    h, n, vocab = cfg.need("hidden"), cfg.need("layers"), cfg.need("vocab")
    b.vocab = vocab
    shape = (b.seq, h)
    b.embed("rwkv.embeddings", vocab, h, shape)
    att = cfg.int("attention_hidden_size", default=h, minimum=1) or h
    inter = cfg.concept("ffn", minimum=1) or 4 * h
    block = Layer(f"time_mix[{att}]", f"channel_mix[{inter}]", [
        ("recurrent", lin("key", h, att)), ("recurrent", lin("value", h, att)),
        ("recurrent", lin("receptance", h, att)), ("recurrent", lin("output", att, h)),
        ("feed_forward", lin("key", h, inter)), ("feed_forward", lin("receptance", h, h)),
        ("feed_forward", lin("value", inter, h))])
    block.more("recurrent", 2 * att + 3 * h)
    block.more("feed_forward", 2 * h)
    block.more("norms", 4 * h)
    first = Layer(block.mixer, block.ffn, list(block.linears), dict(block.extra))
    first.more("norms", 2 * h)  # pre_ln
    b.stack("decoder", "rwkv.blocks", [first] + [block] * (n - 1), hidden=h, intermediate=inter,
            attention=AttentionSpec(0, 0, 0, ("none",) * n), shape=shape)
    b.add("norms", 2 * h)
    b.node("rwkv.ln_out", "norm[layer]", shape)
    b.final_norm = True
    add_head(cfg, b, head_kind(cfg, default="lm"), h, vocab, tie=cfg.bool("tie_word_embeddings"), bias=False,
             family="decoder")
