"""NeoMME (transformers models/neomme): a bidirectional encoder over text tokens and image patches with
factorised embeddings, gated grouped-query attention and value embeddings."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, lin
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.architectures.decoder_only.decoders import layer_types
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_neomme"]


def build_neomme(cfg: Cfg, b: Build) -> None:
    """NeoMMEEmbeddings: vocab_size × embedding_rank, projected to hidden_size (no bias); the patch stem (a
    LayerNorm over 3 × patch_size², up to 2h without bias, down to h with a bias); per layer q, fused k/v, an
    output gate and o (bias-free), a per-head alpha, an up/down MLP (NemotronMLP) and two mixing lambdas; a
    value-embedding table (vocab × KV width). Every norm is weightless (with_scale=False). The MLM logits decode
    through the embeddings; untied (tie_word_embeddings false) transformers 5.24.0 keeps a second copy of the
    word table and the projection (the meta-device count grows by exactly that). embedding_dim sizes only
    NeoMMEForRetrieval's projection."""
    h, n, nh = cfg.need("hidden"), cfg.need("layers"), cfg.need("heads")
    nkv = cfg.concept("kv_heads", minimum=1) or nh
    hd = cfg.concept("head_dim", minimum=1) or h // nh
    b.divides(nkv, nh, "num_key_value_heads", "num_attention_heads")
    ffn = cfg.concept("ffn", minimum=1) or 4 * h
    vocab = cfg.need("vocab")
    rank = cfg.int("embedding_rank", default=h, minimum=1) or h
    patch = cfg.int("patch_size", default=32, minimum=1) or 32
    bias = cfg.bool("mlp_bias")
    b.vocab, b.max_pos = vocab, cfg.concept("max_pos", minimum=1)
    shape = (b.seq, h)
    tables = 1 if cfg.bool("tie_word_embeddings", default=True) else 2
    b.embed("model.embeddings.word_embeddings", tables * vocab, rank, shape)
    b.add("embeddings", tables * rank * h)
    b.embed("model.value_embeddings", vocab, nkv * hd, shape)
    dim = 3 * patch * patch
    b.add("embeddings", 2 * dim + dim * 2 * h + 2 * h * h + h)
    b.node("model.patch_embeddings", f"patch_stem[{dim}->{h}]", shape)
    layer = Layer(f"self_attn[gqa {nh}/{nkv}x{hd} gated]", f"mlp[plain {ffn}]", [
        ("attention", lin("q_proj", h, nh * hd)), ("attention", lin("kv_proj", h, 2 * nkv * hd)),
        ("attention", lin("output_gate", h, nh * hd)), ("attention", lin("o_proj", nh * hd, h)),
        ("feed_forward", lin("up_proj", h, ffn, bias)), ("feed_forward", lin("down_proj", ffn, h, bias))])
    layer.more("attention", nh + 2)  # alpha; the layer's lambdas
    types = layer_types(cfg, n)
    b.stack("encoder", "model.layers", [layer] * n, hidden=h, intermediate=ffn,
            attention=AttentionSpec(nh, nkv, hd, types, cfg.int("sliding_window", default=None)), shape=shape)
    cfg.sub("per_layer_config")  # per-layer sliding windows: masks, no weights
    cfg.int("embedding_dim")
