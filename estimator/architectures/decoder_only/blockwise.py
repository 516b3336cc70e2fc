"""Block-pattern hybrids (Nemotron-H style): every layer is one norm and ONE mixer — Mamba-2,
attention, an MLP or a mixture of experts — in the order `layers_block_type` lists."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, attention_linears, ffn_linears, lin
from hubwatch.estimator.config import Cfg, ConfigError
from hubwatch.estimator.params.heads import add_head, head_kind
from hubwatch.estimator.architectures.decoder_only.hybrid import mamba2_mixer
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_blockwise"]


def build_blockwise(cfg: Cfg, b: Build) -> None:
    pattern = cfg.str_list("layers_block_type") or cfg.str_list("hybrid_override_pattern") or []
    if not pattern:
        raise ConfigError(cfg.key("layers_block_type"), "missing: which mixer each layer uses")
    h, nh = cfg.need("hidden"), cfg.need("heads")
    nkv = cfg.concept("kv_heads", minimum=1) or nh
    hd = cfg.concept("head_dim", minimum=1) or h // nh
    b.divides(nkv, nh, "num_key_value_heads", "num_attention_heads")
    vocab = cfg.need("vocab")
    b.vocab, b.max_pos = vocab, cfg.concept("max_pos")
    inter = cfg.concept("ffn", minimum=1) or 4 * h
    bias = cfg.bool("mlp_bias")
    shape = (b.seq, h)
    b.embed("backbone.embeddings", vocab, h, shape)
    made: dict[str, Layer] = {}
    experts = cfg.concept("experts", minimum=0) or 0
    top_k = cfg.concept("experts_per_tok", default=1, minimum=1) or 1
    moe_inter = cfg.int("moe_intermediate_size", default=inter, minimum=1) or inter
    shared = cfg.int("moe_shared_expert_intermediate_size", default=0) or 0

    def make(kind: str) -> Layer:
        if kind in ("mamba", "linear_attention", "M"):
            layer = mamba2_mixer(cfg, h)
        elif kind in ("attention", "full_attention", "*"):
            layer = Layer(f"attn[gqa {nh}/{nkv}x{hd}]", "", attention_linears(h, nh, nkv, hd, qkv_bias=cfg.bool(
                "attention_bias"), o_bias=cfg.bool("attention_bias")))
        elif kind in ("moe", "E"):
            linears = [("router", lin("gate", h, experts))]
            linears += ffn_linears(h, moe_inter, gated=False, bias=bias, names=("up_proj", "down_proj"),
                                   component="experts", count=experts, active=min(top_k, experts))
            if shared:
                linears += ffn_linears(h, shared, gated=False, bias=bias, component="shared_experts",
                                       names=("shared_up_proj", "shared_down_proj"))
            layer = Layer(f"moe[{top_k} of {experts} x {moe_inter}]", "", linears)
        else:
            layer = Layer(f"mlp[plain {inter}]", "", ffn_linears(h, inter, gated=False, bias=bias,
                                                                 names=("up_proj", "down_proj")))
        layer.more("norms", h)
        return layer

    layers = [made.setdefault(kind, make(kind)) for kind in pattern]
    types = tuple("full" if k in ("attention", "full_attention", "*") else "none" for k in pattern)
    b.stack("decoder", "backbone.layers", layers, hidden=h, intermediate=inter,
            attention=AttentionSpec(nh, nkv, hd, types), shape=shape, num_experts=experts,
            experts_per_token=top_k if experts else 0)
    b.add("norms", h)
    b.node("backbone.norm_f", "norm[rms]", shape)
    b.final_norm = True
    # NemotronHForCausalLM keeps lm_head apart from the embeddings whatever tie_word_embeddings says (transformers
    # 5.24.0 on the meta device: 1,968,355,712 parameters at the defaults, tied or not)
    tie = cfg.bool("tie_word_embeddings") and cfg.model_type != "nemotron_h"
    add_head(cfg, b, head_kind(cfg, default="lm"), h, vocab, tie=tie, bias=False, family="decoder")
