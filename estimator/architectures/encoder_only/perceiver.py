"""Perceiver IO for masked language modelling (transformers models/perceiver, PerceiverForMaskedLM): a latent
array that cross-attends to the embedded text, latent self-attention blocks, and a decoder whose position queries
cross-attend back to the latents."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, lin
from hubwatch.estimator.config import Cfg, ConfigError
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_perceiver"]


def _layer(q_dim: int, kv_dim: int, qk: int, v: int, out: int, widening: int, cross: bool) -> Layer:
    """PerceiverLayer: LayerNorms on the queries (and, cross-attending, the keys' input), biased q/k/v and
    output projections, a LayerNorm and a biased MLP of widening × q_dim."""
    layer = Layer(f"{'cross' if cross else 'self'}_attn[{qk}/{v}]", f"mlp[plain {widening * q_dim}]", [
        ("attention", lin("query", q_dim, qk, True)), ("attention", lin("key", kv_dim, qk, True)),
        ("attention", lin("value", kv_dim, v, True)), ("attention", lin("output.dense", v, out, True)),
        ("feed_forward", lin("mlp.dense1", q_dim, widening * q_dim, True)),
        ("feed_forward", lin("mlp.dense2", widening * q_dim, q_dim, True))])
    layer.more("norms", 2 * q_dim + (2 * kv_dim if cross else 0) + 2 * q_dim)
    return layer


def build_perceiver(cfg: Cfg, b: Build) -> None:
    """PerceiverTextPreprocessor: token and position embeddings at d_model. The latents: num_latents × d_latents.
    The encoder's cross-attention (queries from the latents; qk_channels, when unset, follow
    cross_attention_shape_for_attention: "kv" takes d_model, "q" d_latents; values as wide as qk; output back to
    d_latents) and num_self_attends_per_block self-attention layers at d_latents, shared by all num_blocks.
    PerceiverBasicDecoder: max_position_embeddings × d_model trainable queries and one cross-attention (8 heads,
    qk 256, values d_model, widening 1) into the latents; PerceiverEmbeddingDecoder: a bias over the vocabulary
    (the logits reuse the token table)."""
    if not cfg.architecture.endswith("ForMaskedLM"):
        raise ConfigError(cfg.key("architectures"), "only PerceiverForMaskedLM (text in, text out) is modelled")
    d = cfg.need("hidden")
    latents = cfg.int("d_latents", default=1280, minimum=1) or 1280
    rows = cfg.int("num_latents", default=256, minimum=1) or 256
    n_self = cfg.int("num_self_attends_per_block", default=26, minimum=1) or 26
    cfg.int("num_blocks")  # the blocks reuse the same layers
    cfg.int("num_self_attention_heads")  # heads split the channels: no weights of their own
    cfg.int("num_cross_attention_heads")
    qk_cfg = cfg.int("qk_channels", default=None, minimum=1)
    v_cfg = cfg.int("v_channels", default=None, minimum=1)
    shape_for = cfg.str("cross_attention_shape_for_attention", default="kv")
    cross_w = cfg.int("cross_attention_widening_factor", default=1, minimum=1) or 1
    self_w = cfg.int("self_attention_widening_factor", default=1, minimum=1) or 1
    vocab = cfg.need("vocab")
    max_pos = cfg.int("max_position_embeddings", default=2048, minimum=1) or 2048
    for key in ("image_size", "train_size", "num_frames", "audio_samples_per_frame", "samples_per_patch",
                "output_shape", "output_num_channels"):
        cfg.raw(key)  # they size the other Perceiver models' pre- and post-processors
    b.vocab, b.max_pos = vocab, max_pos
    shape = (rows, latents)
    b.embed("perceiver.input_preprocessor.embeddings", vocab, d, (b.seq, d))
    b.embed("perceiver.input_preprocessor.position_embeddings", max_pos, d, (b.seq, d), "position_embedding")
    b.add("embeddings", rows * latents)
    qk = qk_cfg or (d if shape_for == "kv" else latents)
    cross = _layer(latents, d, qk, v_cfg or qk, latents, cross_w, cross=True)
    sqk = qk_cfg or latents
    sv = v_cfg or sqk
    self_layer = _layer(latents, latents, sqk, sv, sv, self_w, cross=False)
    b.stack("encoder", "perceiver.encoder", [cross] + [self_layer] * n_self, hidden=latents,
            intermediate=self_w * latents, attention=AttentionSpec(1, 1, latents, ("full",) * (n_self + 1)),
            shape=shape)
    b.add("embeddings", max_pos * d)  # the decoder's output position queries
    decoder = _layer(d, latents, 8 * 32, d, d, 1, cross=True)
    b.stack("decoder", "perceiver.decoder.decoding_cross_attention", [decoder], hidden=d, intermediate=d,
            attention=AttentionSpec(8, 8, 32, ("full",)), shape=(max_pos, d))
    b.add("head", vocab)
    b.node("embedding_decoder", "lm_head[tied]", (b.seq, vocab))
