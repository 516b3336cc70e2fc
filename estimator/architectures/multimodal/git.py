"""GIT (transformers models/git): a CLIP-style image encoder, a projection into the text width, and a BERT-style
text decoder whose self-attention also sees the image tokens."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, attention_linears, ffn_linears
from hubwatch.estimator.config import Cfg, ConfigError
from hubwatch.estimator.params.heads import head_kind
from hubwatch.estimator.params.spec import AttentionSpec
from hubwatch.estimator.architectures.multimodal.vision import build_vision_tower

__all__ = ["build_git"]


def build_git(cfg: Cfg, b: Build) -> None:
    """GitEmbeddings (words, learned positions, LayerNorm, no token types); BERT layers (biased q/k/v/o and MLP,
    two LayerNorms); the image encoder (GitVisionModel: CLIP's patch conv without bias, class token, positions,
    pre- and post-LayerNorm); visual_projection (a biased linear and a LayerNorm); one temporal embedding per
    image when num_image_with_embedding is set; GitForCausalLM's output linear with its bias, whose weight is the
    word table while tie_word_embeddings holds."""
    vision = cfg.sub("vision_config")
    if vision is None:
        raise ConfigError(cfg.key("vision_config"), "missing: GIT's image encoder")
    h, n, nh = cfg.need("hidden"), cfg.need("layers"), cfg.need("heads")
    inter = cfg.concept("ffn", minimum=1) or 4 * h
    b.divides(nh, h, "num_attention_heads", "hidden_size")
    vocab = cfg.need("vocab")
    max_pos = cfg.int("max_position_embeddings", default=1024, minimum=1) or 1024
    b.vocab, b.max_pos = vocab, max_pos
    shape = (b.seq, h)
    b.embed("git.embeddings.word_embeddings", vocab, h, shape)
    b.embed("git.embeddings.position_embeddings", max_pos, h, shape, "position_embedding")
    b.add("norms", 2 * h)
    layer = Layer(f"self_attn[mha {nh}x{h // nh}]", f"mlp[plain {inter}]",
                  attention_linears(h, nh, nh, h // nh, qkv_bias=True, o_bias=True)
                  + ffn_linears(h, inter, gated=False, bias=True, names=("intermediate", "output")))
    layer.more("norms", 2 * 2 * h)
    b.stack("decoder", "git.encoder.layer", [layer] * n, hidden=h, intermediate=inter,
            attention=AttentionSpec(nh, nh, h // nh, ("full",) * n), shape=shape)
    b.tower = "vision_tower"
    vh = build_vision_tower(vision, b, "git.image_encoder.vision_model", "clip")
    images = cfg.int("num_image_with_embedding", default=0) or 0
    b.add("embeddings", images * vh)  # img_temperal_embedding
    b.tower = "projector"
    b.add("projector", vh * h + h + 2 * h)
    b.tower = None
    b.node("git.visual_projection", f"projector[{vh}->{h}]", shape)
    if head_kind(cfg, default="lm") == "lm":
        tied = cfg.bool("tie_word_embeddings", default=True)
        b.add("head", vocab + (0 if tied else vocab * h))
        b.lm_head_params += 0 if tied else vocab * h
        b.node("output", "lm_head[tied]" if tied else "lm_head", (b.seq, vocab))
