"""Funnel Transformer (transformers models/funnel): blocks of relative-attention layers that pool the sequence
between blocks, and a shallow decoder that upsamples it back."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, lin
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.heads import head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_funnel"]


def build_funnel(cfg: Cfg, b: Build) -> None:
    """Every layer (FunnelLayer): a bias-free query, biased key and value, the relative-position kernel
    (d_model × n_head × d_head) with three per-head biases and two segment embeddings, a biased output and a
    LayerNorm; a biased feed-forward (d_model → d_inner → d_model) and a LayerNorm. The encoder has
    sum(block_sizes) layers (block_repeats reuse a block's layers, no weights), the decoder num_decoder_layers;
    the embeddings a LayerNorm. The MLM head is a linear to the vocabulary with a bias, tied to the word table
    while tie_word_embeddings holds."""
    d = cfg.need("hidden")
    nh = cfg.need("heads")
    dh = cfg.int("d_head", default=64, minimum=1) or 64
    inner = cfg.int("d_inner", default=3072, minimum=1) or 3072
    blocks = cfg.int_list("block_sizes") or [4, 4, 4]
    cfg.raw("block_repeats")
    cfg.str("pooling_type")  # mean or max pooling between blocks, and whether only queries are pooled: no weights
    cfg.bool("pool_q_only")
    n_dec = cfg.int("num_decoder_layers", default=2) or 0
    vocab = cfg.need("vocab")
    b.vocab, b.max_pos = vocab, None
    shape = (b.seq, d)
    b.embed("funnel.embeddings.word_embeddings", vocab, d, shape)
    b.add("norms", 2 * d)
    width = nh * dh
    layer = Layer(f"rel_attn[{nh}x{dh}]", f"mlp[plain {inner}]", [
        ("attention", lin("q_head", d, width)), ("attention", lin("k_head", d, width, True)),
        ("attention", lin("v_head", d, width, True)), ("attention", lin("r_kernel", d, width)),
        ("attention", lin("post_proj", width, d, True)),
        ("feed_forward", lin("linear_1", d, inner, True)), ("feed_forward", lin("linear_2", inner, d, True))])
    layer.more("attention", 3 * width + 2 * width)  # r_w_bias, r_r_bias, r_s_bias; seg_embed
    layer.more("norms", 2 * 2 * d)
    n_enc = sum(blocks)
    b.stack("encoder", "funnel.encoder.blocks", [layer] * n_enc, hidden=d, intermediate=inner,
            attention=AttentionSpec(nh, nh, dh, ("full",) * n_enc), shape=shape)
    kind = head_kind(cfg, default="mlm")
    if n_dec and not cfg.architecture.endswith("BaseModel"):  # FunnelBaseModel: the encoder alone
        b.stack("decoder", "funnel.decoder.layers", [layer] * n_dec, hidden=d, intermediate=inner,
                attention=AttentionSpec(nh, nh, dh, ("full",) * n_dec), shape=shape)
    if kind in ("mlm", "lm"):
        tied = cfg.bool("tie_word_embeddings", default=True)
        b.add("head", vocab + (0 if tied else vocab * d))
        b.lm_head_params += 0 if tied else vocab * d
        b.node("lm_head", "lm_head[tied]" if tied else "lm_head", (b.seq, vocab))
