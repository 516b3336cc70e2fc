"""ModernBERT-style encoders: pre-norm, fused QKV, GLU feed-forward, optional biases, no position table."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, lin, transformer_dims
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.heads import head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_modernbert"]


def build_modernbert(cfg: Cfg, b: Build) -> None:
    h, n, nh, inter = transformer_dims(cfg, b)
    vocab = cfg.need("vocab")
    b.vocab, b.max_pos = vocab, cfg.concept("max_pos")
    norm = h * (2 if cfg.bool("norm_bias") else 1)
    ab, mb = cfg.bool("attention_bias"), cfg.bool("mlp_bias")
    shape = (b.seq, h)
    b.embed("embeddings.tok_embeddings", vocab, h, shape)
    b.add("norms", norm)
    linears = [("attention", lin("Wqkv", h, 3 * h, ab)), ("attention", lin("Wo", h, h, ab)),
               ("feed_forward", lin("Wi", h, 2 * inter, mb)), ("feed_forward", lin("mlp.Wo", inter, h, mb))]
    first = Layer(f"attn[mha {nh}x{h // nh}]", f"mlp[glu {inter}]", linears)
    first.more("norms", norm)
    rest = Layer(first.mixer, first.ffn, linears)
    rest.more("norms", 2 * norm)
    types = tuple("full" if t == "full_attention" else "sliding" for t in (cfg.str_list("layer_types") or ["full_attention"] * n))
    b.stack("encoder", "layers", [first] + [rest] * (n - 1), hidden=h, intermediate=inter,
            attention=AttentionSpec(nh, nh, h // nh, types[:n], cfg.int("local_attention", default=None)),
            shape=shape, gated=True)
    b.add("norms", norm)
    b.node("final_norm", "norm[ln]", shape)
    kind = head_kind(cfg)
    head = h * h + (h if cfg.bool("classifier_bias") else 0) + norm
    if kind in ("mlm", "lm"):
        untied = not cfg.bool("tie_word_embeddings", default=True)
        b.add("head", head + (vocab if cfg.bool("decoder_bias", default=True) else 0) + (vocab * h if untied else 0))
        b.node("decoder", "mlm_head", (b.seq, vocab))
    elif kind in ("seqcls", "tokcls", "mc", "qa"):
        labels = {"qa": 2, "mc": 1}.get(kind, cfg.num_labels())
        b.add("head", head + h * labels + labels)
        b.node("classifier", f"classifier[{labels}]", (labels,))
