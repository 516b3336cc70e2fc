"""LongCat-Flash (transformers models/longcat_flash): each layer two MLA attentions, two dense MLPs and one
shortcut mixture of experts whose router also picks zero (identity) experts."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, ffn_linears, lin
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.architectures.decoder_only.decoders import mla_attention
from hubwatch.estimator.params.heads import add_head, head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_longcat_flash"]


def build_longcat_flash(cfg: Cfg, b: Build) -> None:
    """LongcatFlashDecoderLayer: self_attn[0..1] (MLA), mlps[0..1] (gated, ffn_hidden_size), four RMSNorms and
    LongcatFlashMoE: a router over n_routed_experts + zero_expert_num, and LongcatFlashExperts, whose
    gate_up_proj is sized for every expert the router can pick (routed and zero: total_experts × 2 × expert width
    × hidden) while down_proj holds the routed experts only."""
    h, n, nh = cfg.need("hidden"), cfg.need("layers"), cfg.need("heads")
    vocab = cfg.need("vocab")
    ffn = cfg.concept("ffn", minimum=1) or 4 * h
    experts = cfg.concept("experts", minimum=1) or 1
    zero = cfg.int("zero_expert_num", default=0) or 0
    top_k = min(cfg.concept("experts_per_tok", default=1, minimum=1) or 1, experts + zero)
    inter = cfg.concept("expert_ffn", minimum=1) or ffn
    b.vocab, b.max_pos = vocab, cfg.concept("max_pos", minimum=1)
    shape = (b.seq, h)
    b.embed("model.embed_tokens", vocab, h, shape)
    attn, attn_extra, attn_type = mla_attention(cfg, h, nh)
    cfg.concept("kv_heads")  # MLA is sized by its ranks and head dims: head_dim and the KV-head count size nothing
    cfg.concept("head_dim")
    dense = ffn_linears(h, ffn, gated=True, bias=False)
    layer = Layer(f"{attn_type}x2", f"moe[{top_k} of {experts}+{zero} zero x {inter}]+mlp[glu {ffn}]x2",
                  attn + attn + dense + dense + [
                      ("router", lin("mlp.router.classifier", h, experts + zero, cfg.bool("router_bias"))),
                      ("experts", lin("mlp.experts.gate_up_proj", h, 2 * inter, count=experts + zero, active=top_k)),
                      ("experts", lin("mlp.experts.down_proj", inter, h, count=experts, active=top_k))])
    layer.more("attention", 2 * attn_extra)
    layer.more("norms", 4 * h)
    b.stack("decoder", "model.layers", [layer] * n, hidden=h, intermediate=ffn,
            attention=AttentionSpec(nh, nh, cfg.int("qk_head_dim", default=None, minimum=1) or h // nh,
                                    ("full",) * (2 * n), cfg.int("kv_lora_rank", default=None)),
            shape=shape, num_experts=experts, experts_per_token=top_k)
    b.add("norms", h)
    b.final_norm = True
    add_head(cfg, b, head_kind(cfg, default="lm"), h, vocab, tie=cfg.bool("tie_word_embeddings"), bias=False,
             family="decoder")
