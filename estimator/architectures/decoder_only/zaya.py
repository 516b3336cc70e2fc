"""ZAYA (transformers models/zaya): compressed convolutional attention (CCA) and a mixture of experts whose router
is a small MLP carrying its state from layer to layer."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, lin
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.architectures.decoder_only.decoders import layer_types
from hubwatch.estimator.params.heads import add_head, head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_zaya"]


def build_zaya(cfg: Cfg, b: Build) -> None:
    """ZayaCCAProjection: q and k, a value split into current and delayed halves, a depthwise conv (kernel
    cca_time0) and a grouped conv (kernel cca_time1, one group per head) over the q/k channels, both biased; a
    per-KV-head key temperature; o_proj. ZayaRouter: a biased down projection to router_hidden_size, a state
    scale (every layer but the first), then an MLP (RMSNorm, two biased square linears, an output over
    num_experts + 1 classes: the skip expert); ZayaExperts: gated, moe_intermediate_size wide. Each layer has two
    RMSNorms and two residual scalings (a scale and a bias on each branch); the model an input scale and bias."""
    h, n, nh = cfg.need("hidden"), cfg.need("layers"), cfg.need("heads")
    nkv = cfg.concept("kv_heads", minimum=1) or nh
    hd = cfg.concept("head_dim", minimum=1) or h // nh
    b.divides(nkv, nh, "num_key_value_heads", "num_attention_heads")
    vocab = cfg.need("vocab")
    experts = cfg.concept("experts", minimum=1) or 1
    top_k = min(cfg.concept("experts_per_tok", default=1, minimum=1) or 1, experts)
    inter = cfg.concept("expert_ffn", minimum=1) or cfg.concept("ffn", minimum=1) or 4 * h
    router = cfg.int("router_hidden_size", default=256, minimum=1) or 256
    t0 = cfg.int("cca_time0", default=2, minimum=1) or 2
    t1 = cfg.int("cca_time1", default=2, minimum=1) or 2
    bias = cfg.bool("attention_bias")
    b.vocab, b.max_pos = vocab, cfg.concept("max_pos", minimum=1)
    shape = (b.seq, h)
    b.embed("model.embed_tokens", vocab, h, shape)
    b.add("norms", h + 2 * h)  # final norm; input_hidden_states_scale and _bias
    channels = (nkv + nh) * hd
    kv = nkv * hd
    linears = [("attention", lin("q_proj", h, nh * hd, bias)), ("attention", lin("k_proj", h, kv, bias)),
               ("attention", lin("v_proj_current", h, kv // 2, bias)),
               ("attention", lin("v_proj_delayed", h, kv // 2, bias)),
               ("attention", lin("o_proj", nh * hd, h, bias)),
               ("router", lin("gate.down_proj", h, router, True)),
               ("router", lin("gate.router_mlp.fc1", router, router, True)),
               ("router", lin("gate.router_mlp.fc2", router, router, True)),
               ("router", lin("gate.router_mlp.out_proj", router, experts + 1)),
               ("experts", lin("experts.gate_up_proj", h, 2 * inter, count=experts, active=top_k)),
               ("experts", lin("experts.down_proj", inter, h, count=experts, active=top_k))]

    def make(first: bool) -> Layer:
        layer = Layer(f"cca[{nh}/{nkv}x{hd}]", f"moe[{top_k} of {experts} x {inter}]", list(linears))
        layer.more("attention", channels * t0 + channels + channels * hd * t1 + channels + nkv)
        layer.more("router", router + (0 if first else router))  # the router MLP's norm; the state scale
        layer.more("norms", 2 * h + 2 * 4 * h)
        return layer

    first, rest = make(True), make(False)
    b.stack("decoder", "model.layers", [first] + [rest] * (n - 1), hidden=h, intermediate=inter,
            attention=AttentionSpec(nh, nkv, hd, layer_types(cfg, n)), shape=shape, num_experts=experts,
            experts_per_token=top_k)
    b.final_norm = True
    add_head(cfg, b, head_kind(cfg, default="lm"), h, vocab, tie=cfg.bool("tie_word_embeddings", default=True),
             bias=cfg.bool("lm_head_bias"), family="decoder")
