"""T5Gemma 2 (transformers models/t5gemma2): a Gemma-3 encoder with its SigLIP image tower and projector, and a
Gemma-3 decoder whose merged attention reads the encoder through its own projections."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build
from hubwatch.estimator.config import Cfg, ConfigError
from hubwatch.estimator.architectures.decoder_only.decoders import build_decoder
from hubwatch.estimator.params.heads import head_kind
from hubwatch.estimator.architectures.multimodal.vision import build_vision_tower

__all__ = ["build_t5gemma2"]


def _part(cfg: Cfg, sub: Cfg, tied: bool) -> Cfg:
    return Cfg({**sub.data, "model_type": "gemma3_text", "tie_word_embeddings": tied}, sub.path)


def build_t5gemma2(cfg: Cfg, b: Build) -> None:
    """The encoder: Gemma-3 text layers over encoder.text_config, the SigLIP tower of encoder.vision_config (with
    its pooling head), the Gemma-3 projector (a vision × text matrix and a norm over the vision width) and the
    end-of-image embedding. The decoder: Gemma-3 layers over decoder; merged self/cross attention adds no weights.
    Tied (tie_word_embeddings), the decoder's table and the LM head are the encoder's word table; untied, both are
    their own. The top-level vocab_size sizes nothing (each side reads its own)."""
    enc, dec = cfg.sub("encoder"), cfg.sub("decoder")
    if enc is None or dec is None:
        raise ConfigError(cfg.key("encoder" if enc is None else "decoder"), "missing: T5Gemma 2's two stacks")
    text, vision = enc.sub("text_config"), enc.sub("vision_config")
    if text is None:
        raise ConfigError(enc.key("text_config"), "missing: the encoder's text model")
    tied = cfg.bool("tie_word_embeddings", default=True)
    cfg.concept("vocab")
    enc.bool("tie_word_embeddings")
    build_decoder(_part(cfg, text, tied), b, prefix="model.encoder.text_model", name="encoder", head="base")
    th = text.need("hidden")
    if vision is not None:
        b.tower = "vision_tower"
        vh = build_vision_tower(vision, b, "model.encoder.vision_tower", "siglip")
        b.tower = "projector"
        b.add("projector", vh * th + vh)
        b.tower = None
    b.add("embeddings", th)  # eoi_embedding
    vocab = text.need("vocab")
    dh = dec.need("hidden")
    build_decoder(_part(cfg, dec, tied), b, prefix="model.decoder", head=head_kind(cfg, default="lm"))
    if tied:  # the decoder's embed_tokens is the encoder's table
        rows = dec.need("vocab")
        b.components["embeddings"] -= rows * dh
        b.embedding_params -= rows * dh
    b.vocab = vocab
