"""Reformer (transformers models/reformer): reversible layers of LSH or local attention, chunked feed-forwards,
axial position embeddings and a head over both reversible streams."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, lin
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.heads import head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_reformer"]


def build_reformer(cfg: Cfg, b: Build) -> None:
    """LSH attention projects a shared query/key and a value, local attention a query, a key and a value (all
    bias-free, num_attention_heads × attention_head_size wide), then a bias-free output; each layer has a
    LayerNorm before its attention and before its feed-forward (h → feed_forward_size → h, biased). The encoder
    ends in a LayerNorm over both streams (2h), and the LM head maps 2h to the vocabulary, so it never shares the
    h-wide word table; its bias is stored twice (ReformerOnlyLMHead.bias and decoder.bias)."""
    h, n, vocab = cfg.need("hidden"), cfg.need("layers"), cfg.need("vocab")
    nh = cfg.need("heads")
    hd = cfg.int("attention_head_size", default=64, minimum=1) or 64
    ff = cfg.int("feed_forward_size", default=512, minimum=1) or 512
    kinds = cfg.str_list("attn_layers") or ["local", "lsh"]
    cfg.int("num_hashes")  # hashing rounds of LSH attention, at run time: no weights
    b.vocab, b.max_pos = vocab, cfg.concept("max_pos", minimum=1)
    shape = (b.seq, h)
    b.embed("reformer.embeddings.word_embeddings", vocab, h, shape)
    if cfg.bool("axial_pos_embds", default=True):
        rows = cfg.int_list("axial_pos_shape") or [64, 64]
        dims = cfg.int_list("axial_pos_embds_dim") or [64, 192]
        b.add("embeddings", sum(r * d for r, d in zip(rows, dims)))
    else:
        b.embed("reformer.embeddings.position_embeddings", b.max_pos or 4096, h, shape, "position_embedding")
    width = nh * hd
    made: dict[str, Layer] = {}

    def make(kind: str) -> Layer:
        names = ("query_key", "value") if kind == "lsh" else ("query", "key", "value")
        layer = Layer(f"{kind}_attn[{nh}x{hd}]", f"mlp[plain {ff}]",
                      [("attention", lin(name, h, width)) for name in names]
                      + [("attention", lin("output.dense", width, h)),
                         ("feed_forward", lin("dense", h, ff, True)), ("feed_forward", lin("output", ff, h, True))])
        layer.more("norms", 2 * 2 * h)
        return layer

    layers = [made.setdefault(k, make(k)) for k in (kinds[i % len(kinds)] for i in range(n))]
    b.stack("encoder", "reformer.encoder.layers", layers, hidden=h, intermediate=ff,
            attention=AttentionSpec(nh, nh, hd, ("full",) * n), shape=shape)
    b.add("norms", 2 * 2 * h)
    b.final_norm = True
    if head_kind(cfg, default="lm") in ("lm", "mlm"):
        cfg.bool("tie_word_embeddings")  # read: a 2h-wide head cannot share the h-wide table
        b.add("head", 2 * h * vocab + 2 * vocab)
        b.lm_head_params += 2 * h * vocab
        b.node("lm_head", "lm_head", (b.seq, vocab))
