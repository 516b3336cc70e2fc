"""MobileBERT: narrow blocks inside a wide residual stream — bottlenecks into and out of each block (`use_bottleneck`,
`intra_bottleneck_size`, a shared query/key bottleneck), several feed-forward networks per block, trigram input
embeddings projected up to the hidden size, and an MLM head that widens the embeddings back to the hidden size."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, lin
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.heads import head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_mobilebert"]


def _layer(cfg: Cfg, h: int, t: int, nh: int, inter: int) -> Layer:
    """One block (t: the width inside it, `true_hidden_size`); NoNorm and LayerNorm both hold a weight and a bias."""
    bottleneck = cfg.bool("use_bottleneck", default=True)
    qk_shared = cfg.bool("key_query_shared_bottleneck", default=True)
    a = nh * (t // nh)
    v_in = t if cfg.bool("use_bottleneck_attention") else h
    ffns = cfg.int("num_feedforward_networks", default=4, minimum=1) or 1
    linears = [("attention", lin("query", t, a, True)), ("attention", lin("key", t, a, True)),
               ("attention", lin("value", v_in, a, True)), ("attention", lin("attention.output.dense", a, t, True)),
               ("feed_forward", lin("intermediate.dense", t, inter, True)),
               ("feed_forward", lin("output.dense", inter, t, True))]
    norms = 2 * 2 * t
    if ffns > 1:
        linears += [("feed_forward", lin("ffn.intermediate.dense", t, inter, True, count=ffns - 1)),
                    ("feed_forward", lin("ffn.output.dense", inter, t, True, count=ffns - 1))]
        norms += (ffns - 1) * 2 * t
    if bottleneck:
        linears += [("projections", lin("output.bottleneck.dense", t, h, True)),
                    ("projections", lin("bottleneck.input.dense", h, t, True))]
        norms += 2 * h + 2 * t
        if qk_shared:
            linears.append(("projections", lin("bottleneck.attention.dense", h, t, True)))
            norms += 2 * t
    layer = Layer(f"attention[mha {nh}x{t // nh} in {t}]", f"mlp[plain {inter}]x{ffns}", linears)
    layer.more("norms", norms)
    return layer


def build_mobilebert(cfg: Cfg, b: Build) -> None:
    h, n, nh, vocab = cfg.need("hidden"), cfg.need("layers"), cfg.need("heads"), cfg.need("vocab")
    inter = cfg.need("ffn")
    emb = cfg.int("embedding_size", default=128, minimum=1) or 128
    intra = cfg.int("intra_bottleneck_size", default=128, minimum=1) or 128  # read either way
    t = intra if cfg.bool("use_bottleneck", default=True) else h
    b.divides(nh, t, "num_attention_heads", "the block width (intra_bottleneck_size)")
    cfg.raw("true_hidden_size")  # derived by the config from the two above
    cfg.str("normalization_type")  # no_norm or layer_norm: a weight and a bias either way
    max_pos = cfg.int("max_position_embeddings", default=512, minimum=1) or 512
    types = cfg.int("type_vocab_size", default=2) or 0
    trigram = cfg.bool("trigram_input", default=True)
    b.vocab, b.max_pos = vocab, max_pos
    seq = b.seq
    b.embed("mobilebert.embeddings.word_embeddings", vocab, emb, (seq, emb))
    b.embed("mobilebert.embeddings.position_embeddings", max_pos, h, (seq, h), "position_embedding")
    b.embed("mobilebert.embeddings.token_type_embeddings", types, h, (seq, h), "token_type_embedding")
    b.add("embeddings", (3 if trigram else 1) * emb * h + h)
    b.node("mobilebert.embeddings.embedding_transformation", f"linear[{(3 if trigram else 1) * emb}->{h}]",
           (seq, h))
    b.add("norms", 2 * h)
    b.stack("encoder", "mobilebert.encoder.layer", [_layer(cfg, h, t, nh, inter)] * n, hidden=h,
            intermediate=inter, attention=AttentionSpec(nh, nh, t // nh, ("full",) * n), shape=(seq, h))
    kind = head_kind(cfg)
    pooler = h * h + h if cfg.bool("classifier_activation", default=True) else 0
    labels = cfg.num_labels()
    untied = not cfg.bool("tie_word_embeddings", default=True)  # only an MLM head has tensors to tie
    if kind in ("mlm", "pretrain", "lm"):  # untied: the decoder's own weight and bias
        b.add("head", h * h + 3 * h + vocab * (h - emb) + vocab + (vocab * emb + vocab if untied else 0))
        b.lm_head_params += vocab * emb if untied else 0
        b.node("cls.predictions", f"mlm_head[widen {emb}->{h}]", (seq, vocab))
        if kind == "pretrain":
            b.add("head", pooler + 2 * h + 2)
    elif kind in ("seqcls", "tokcls", "qa"):
        out = 2 if kind == "qa" and labels < 2 else labels
        b.add("head", (pooler if kind == "seqcls" else 0) + h * out + out)
        b.node("classifier", f"classifier[{out}]", (out,))
    else:
        if kind != "base":
            b.guess(f"head {kind} of MobileBERT (counted as the bare model with its pooler)")
        b.add("pooler", pooler)
