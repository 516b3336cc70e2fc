"""Self-supervised speech encoders (wav2vec 2.0 / HuBERT): convolutional feature extractor,
convolutional position embedding, BERT-like layers, CTC or classification heads."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, transformer_dims
from hubwatch.estimator.config import Cfg, ConfigError
from hubwatch.estimator.architectures.encoder_only.encoders import encoder_layer
from hubwatch.estimator.params.heads import head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_speech"]


def build_speech(cfg: Cfg, b: Build) -> None:
    h, n, nh, inter = transformer_dims(cfg, b)
    dims = cfg.int_list("conv_dim") or [512] * 7
    kernels = cfg.int_list("conv_kernel") or [10, 3, 3, 3, 3, 2, 2]
    if len(dims) != len(kernels) or not dims or min(dims + kernels) < 1:
        raise ConfigError(cfg.key("conv_dim"), "conv_dim and conv_kernel must be lists of the same length ≥ 1")
    bias = cfg.bool("conv_bias")
    norm = cfg.str("feat_extract_norm", default="group")
    extractor, prev = 0, 1
    for i, (dim, k) in enumerate(zip(dims, kernels)):
        extractor += prev * dim * k + (dim if bias else 0)
        if norm == "layer" or (norm == "group" and i == 0):
            extractor += 2 * dim
        prev = dim
    frames = max(b.seq, 1)
    b.add("embeddings", extractor)
    b.node("feature_extractor", f"conv1d x{len(dims)} [1->{prev}]", (frames, prev))
    proj_ln = 2 * prev if cfg.bool("feat_proj_layer_norm", default=True) else 0
    b.add("embeddings", proj_ln + prev * h + h)
    b.node("feature_projection", f"linear[{prev}->{h}]", (frames, h))
    kernel = cfg.int("num_conv_pos_embeddings", default=128, minimum=1) or 128
    groups = cfg.int("num_conv_pos_embedding_groups", default=16, minimum=1) or 1
    b.divides(groups, h, "num_conv_pos_embedding_groups", "hidden_size")
    b.add("embeddings", h * (h // groups) * kernel + kernel + h)  # weight-normed conv: v, g and bias
    b.node("encoder.pos_conv_embed", f"conv1d[{h} k{kernel} g{groups}]", (frames, h))
    if (cfg.float("mask_time_prob", default=0.05) or 0) > 0 or (cfg.float("mask_feature_prob", default=0) or 0) > 0:
        b.add("embeddings", h)
    b.add("norms", 2 * h)
    b.stack("encoder", "encoder.layers", [encoder_layer(cfg, h, nh, inter)] * n, hidden=h, intermediate=inter,
            attention=AttentionSpec(nh, nh, h // nh, ("full",) * n), shape=(frames, h))
    kind = head_kind(cfg)
    vocab = cfg.int("vocab_size", default=32) or 0
    b.vocab = vocab
    if kind == "ctc":
        out = cfg.int("output_hidden_size", default=h) or h
        b.add("head", out * vocab + vocab)
        b.node("lm_head", f"ctc_head[{vocab}]", (frames, vocab))
    elif kind == "seqcls":
        proj = cfg.int("classifier_proj_size", default=256, minimum=1) or 256
        labels = cfg.num_labels()
        b.add("head", h * proj + proj + proj * labels + labels)
        b.node("classifier", f"classifier[{labels}]", (labels,))
