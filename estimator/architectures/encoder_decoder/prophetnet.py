"""ProphetNet: an encoder-decoder whose decoder predicts `ngram` future tokens with n-gram self-attention (a
learned projection to relative-position buckets per head in every decoder layer, n-gram embeddings), learned
positions and an embedding LayerNorm on both sides, and biased q/k/v/out projections."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, attention_linears, ffn_linears, lin
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.heads import head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_prophetnet"]


def _layer(d: int, nh: int, ffn: int, *, buckets: int = 0, cross: bool = False) -> Layer:
    attn = attention_linears(d, nh, nh, d // nh, qkv_bias=True, o_bias=True,
                             names=("query_proj", "key_proj", "value_proj", "out_proj"))
    linears = list(attn)
    if buckets:  # n-gram self-attention: relative-position logits per bucket and head, from the hidden state
        linears.append(("attention", lin("relative_pos_embeddings", d, buckets * nh, True)))
    if cross:
        linears += attn
    linears += ffn_linears(d, ffn, gated=False, bias=True, names=("intermediate", "output"))
    mixer = ("ngram_self_attn" if buckets else "self_attn") + f"[mha {nh}x{d // nh}]" + ("+cross_attn" if cross else "")
    layer = Layer(mixer, f"mlp[plain {ffn}]", linears)
    layer.more("norms", (3 if cross else 2) * 2 * d)
    return layer


def build_prophetnet(cfg: Cfg, b: Build) -> None:
    """*ForConditionalGeneration: both stacks; *ForCausalLM: the decoder alone (its layers keep cross-attention
    while `add_cross_attention` is set). The word embeddings are shared by the stacks and the LM head while
    `tie_word_embeddings` holds; with it off each stack keeps its own copy and the head its own matrix."""
    d, vocab = cfg.need("hidden"), cfg.need("vocab")
    n_enc = cfg.int("num_encoder_layers", default=12) or 0
    n_dec = cfg.int("num_decoder_layers", default=12) or 0
    nh_e = cfg.int("num_encoder_attention_heads", default=16, minimum=1) or 16
    nh_d = cfg.int("num_decoder_attention_heads", default=16, minimum=1) or 16
    ff_e = cfg.int("encoder_ffn_dim", default=4096, minimum=1) or 4096
    ff_d = cfg.int("decoder_ffn_dim", default=4096, minimum=1) or 4096
    for nh in (nh_e, nh_d):
        b.divides(nh, d, "attention heads", "hidden_size")
    max_pos = cfg.int("max_position_embeddings", default=512, minimum=1) or 512
    ngram = cfg.int("ngram", default=2) or 0
    buckets = cfg.int("num_buckets", default=32, minimum=1) or 32
    cross = cfg.bool("add_cross_attention", default=True)
    tied = cfg.bool("tie_word_embeddings", default=True)
    b.vocab, b.max_pos = vocab, max_pos
    seq = b.seq
    b.embed("prophetnet.word_embeddings", vocab, d, (seq, d))
    if not cfg.architecture.endswith("ForCausalLM"):
        b.embed("prophetnet.encoder.position_embeddings", max_pos, d, (seq, d), "position_embedding")
        b.add("norms", 2 * d)
        if not tied:
            b.embed("prophetnet.encoder.word_embeddings", vocab, d, (seq, d))
        b.stack("encoder", "prophetnet.encoder.layers", [_layer(d, nh_e, ff_e)] * n_enc, hidden=d,
                intermediate=ff_e, attention=AttentionSpec(nh_e, nh_e, d // nh_e, ("full",) * n_enc),
                shape=(seq, d))
    b.embed("prophetnet.decoder.position_embeddings", max_pos, d, (seq, d), "position_embedding")
    b.embed("prophetnet.decoder.ngram_embeddings", ngram, d, (ngram, d))
    b.add("norms", 2 * d)
    if not tied:
        b.embed("prophetnet.decoder.word_embeddings", vocab, d, (seq, d))
    b.stack("decoder", "prophetnet.decoder.layers", [_layer(d, nh_d, ff_d, buckets=buckets, cross=cross)] * n_dec,
            hidden=d, intermediate=ff_d, attention=AttentionSpec(
                nh_d, nh_d, d // nh_d, ("full",) * n_dec, cross_attention=cross), shape=(seq, d))
    if head_kind(cfg, default="lm") == "lm":
        if not tied:
            b.add("head", vocab * d)
            b.lm_head_params = vocab * d
        b.node("lm_head", "lm_head", (seq, vocab))
