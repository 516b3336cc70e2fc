"""Inkling's text model (transformers models/inkling, InklingForCausalLM): attention with short convolutions and a
hidden-state-conditioned relative position bias, sliding layers with their own head counts, and a mixture of
experts whose router also scores the shared experts."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, lin
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.heads import add_head, head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_inkling", "build_inkling_like"]


def build_inkling(cfg: Cfg, b: Build) -> None:
    """InklingAttention: q, k, v, r (num_heads × d_rel) and o, bias-free; depthwise short convolutions on k and v
    (conv_kernel_size, no bias); q/k RMSNorms over head_dim; a relative-logits bank d_rel × extent (the sliding
    window on hybrid_sliding layers, rel_extent elsewhere). hybrid_sliding layers use the swa_* head counts and
    width. InklingDecoderLayer adds two more short convolutions (after attention and after the MLP) and two
    RMSNorms. InklingMoE: a router over routed + shared experts with a global scale, gated routed experts and
    n_shared_experts shared ones; a dense layer is a gated MLP with a global scale. The embedding carries a norm
    weight; the LM head is its own matrix unless tie_word_embeddings is set."""
    h, n = cfg.need("hidden"), cfg.need("layers")
    vocab = cfg.need("vocab")
    kernel = cfg.int("conv_kernel_size", default=4, minimum=1) or 4
    cfg.int("number_of_conv_states")  # conv caches at run time
    if not cfg.int("num_mtp_layers", default=0):  # no multi-token-prediction layers: their layout settings size nothing
        cfg.bool("mtp_hidden_states_first")
        cfg.bool("chain_hidden_post_norm")
    d_rel = cfg.int("d_rel", default=16, minimum=1) or 16
    extent = cfg.int("rel_extent", default=1024, minimum=1) or 1024
    window = cfg.int("sliding_window_size", default=512, minimum=1) or 512
    full = (cfg.need("heads"), cfg.concept("kv_heads", minimum=1) or cfg.need("heads"),
            cfg.concept("head_dim", minimum=1) or h // cfg.need("heads"))
    swa = (cfg.int("swa_num_attention_heads", default=64, minimum=1) or 64,
           cfg.int("swa_num_key_value_heads", default=16, minimum=1) or 16,
           cfg.int("swa_head_dim", default=128, minimum=1) or 128)
    types = cfg.str_list("layer_types") or ["hybrid" if (i + 1) % 6 == 0 else "hybrid_sliding" for i in range(n)]
    mlp_types = cfg.str_list("mlp_layer_types") or ["sparse"] * n
    experts = cfg.concept("experts", minimum=1) or 1
    shared = cfg.concept("shared_experts", default=0) or 0
    top_k = min(cfg.concept("experts_per_tok", default=1, minimum=1) or 1, experts)
    inter = cfg.concept("expert_ffn", minimum=1) or 4 * h
    dense_inter = cfg.int("intermediate_size", default=4 * h, minimum=1) or 4 * h
    b.vocab, b.max_pos = vocab, cfg.concept("max_pos", minimum=1)
    shape = (b.seq, h)
    b.embed("model.embed_tokens", vocab, h, shape)
    b.add("norms", h + h)  # the normed embedding's weight; the final norm
    made: dict[tuple[bool, bool], Layer] = {}

    def make(sliding: bool, sparse: bool) -> Layer:
        nh, nkv, hd = swa if sliding else full
        linears = [("attention", lin("q_proj", h, nh * hd)), ("attention", lin("k_proj", h, nkv * hd)),
                   ("attention", lin("v_proj", h, nkv * hd)), ("attention", lin("r_proj", h, nh * d_rel)),
                   ("attention", lin("o_proj", nh * hd, h))]
        if sparse:
            linears += [("router", lin("mlp.gate", h, experts + shared)),
                        ("experts", lin("mlp.experts.gate_up_proj", h, 2 * inter, count=experts, active=top_k)),
                        ("experts", lin("mlp.experts.down_proj", inter, h, count=experts, active=top_k)),
                        ("shared_experts", lin("mlp.shared_experts", h, 3 * inter, count=shared))]
        else:
            linears += [("feed_forward", lin("mlp.gate_up", h, 2 * dense_inter)),
                        ("feed_forward", lin("mlp.down_proj", dense_inter, h))]
        layer = Layer(f"attn[{nh}/{nkv}x{hd}{' sliding' if sliding else ''}]+sconv",
                      f"moe[{top_k} of {experts} x {inter}]" if sparse else f"mlp[glu {dense_inter}]", linears)
        layer.more("attention", 2 * nkv * hd * kernel + 2 * hd + d_rel * (window if sliding else extent))
        layer.more("conv", 2 * h * kernel)
        layer.more("norms", 2 * h)
        layer.more("router" if sparse else "feed_forward", 1)  # global_scale
        return layer

    keys = [(i < len(types) and types[i] == "hybrid_sliding", i >= len(mlp_types) or mlp_types[i] == "sparse")
            for i in range(n)]
    layers = [made.setdefault(k, make(*k)) for k in keys]
    nh, nkv, hd = full
    b.stack("decoder", "model.layers", layers, hidden=h, intermediate=inter,
            attention=AttentionSpec(nh, nkv, hd, tuple("sliding" if s else "full" for s, _ in keys), window),
            shape=shape, num_experts=experts, experts_per_token=top_k)
    b.final_norm = True
    add_head(cfg, b, head_kind(cfg, default="lm"), h, vocab, tie=cfg.bool("tie_word_embeddings"), bias=False,
             family="decoder")


def build_inkling_like(cfg: Cfg, b: Build) -> None:
    """Inkling-2's text models: no modelling code read for them, so Inkling's layers, their own keys left unread."""
    b.guess(f"{cfg.model_type} counted as Inkling's text model")
    build_inkling(cfg, b)
