"""Which family a config belongs to, and the builders for composites (dual towers, vision + language, audio).

The builder of a model type is found in `registry.ARCHITECTURES` and imported when first needed; the
generic decoder (every model type the table does not name) and the parts composites are assembled
from are imported here on the first config that uses them.
"""

from __future__ import annotations

from hubwatch.estimator.architectures.registry import ARCHITECTURES, load, model_types
from hubwatch.estimator.config import Cfg, ConfigError
from hubwatch.estimator.params.blocks import Build, lin
from hubwatch.estimator.params.heads import head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build", "detect_family"]

_T5 = ".encoder_decoder.encdec:build_t5"
_BART = ".encoder_decoder.encdec:build_bart"
_DUAL_TOWER = ".dispatch:_dual_tower"
VISION_TYPES = model_types(".multimodal.vision:build_vision")


def detect_family(cfg: Cfg) -> str:
    mt = cfg.model_type
    if cfg.sub("text_config", "text_config_dict") is not None and cfg.sub("vision_config", "vision_config_dict") is not None:
        return "composite"
    route = ARCHITECTURES.get(mt)
    by_type = route.branch if route is not None and route.by_type else None
    if by_type == "encoder-decoder" or (cfg.bool("is_encoder_decoder") and cfg.has("d_kv")):
        return "encoder-decoder"
    if cfg.bool("is_encoder_decoder") and cfg.has("encoder_layers"):
        return "encoder-decoder"
    if cfg.sub("encoder") is not None and cfg.sub("decoder") is not None:
        return "encoder-decoder"
    if by_type == "decoder":  # state-space models
        return "decoder"
    if by_type == "encoder" or _bert_like(cfg):
        return "encoder"
    if by_type == "text-tower":
        return "text-tower"
    text = cfg.sub("text_config", "llm_config", "language_config", "text_config_dict")
    if by_type == "vision" or (cfg.has("image_size", "patch_size") and not cfg.has("vocab_size") and text is None):
        return "vision"
    if text is not None:
        return "composite"
    return "decoder"


def _bert_like(cfg: Cfg) -> bool:
    """A BERT-style encoder by evidence: token-type embeddings and LayerNorm, no decoder-only keys
    (rotary settings, KV-head counts, RMSNorm)."""
    return (cfg.has("type_vocab_size", "type_vocab_sizes") and cfg.has("layer_norm_eps", "layer_norm_epsilon")
            and not cfg.has("rms_norm_eps", "num_key_value_heads", "rope_parameters", "rope_theta"))


def _is_blockwise(cfg: Cfg) -> bool:
    """A decoder whose layers are listed by block type (Nemotron-H): built by decoder_only/blockwise.py."""
    return cfg.model_type == "nemotron_h" or (cfg.has("layers_block_type") and not cfg.has("num_hidden_layers"))


def build(cfg: Cfg, b: Build) -> str:
    """Walks the config into the build; returns the family."""
    family = detect_family(cfg)
    mt = cfg.model_type
    route = ARCHITECTURES.get(mt)
    target = route.target if route is not None and route.branch == family else None
    if family == "composite":
        _composite(cfg, b)
    elif family == "encoder-decoder":
        if target is not None and target not in (_T5, _BART):
            load(target)(cfg, b)  # T5Gemma, T5Gemma 2, ProphetNet
        elif target == _T5 or cfg.has("d_kv"):
            load(_T5)(cfg, b)
        elif cfg.sub("encoder") is not None and not cfg.has("encoder_layers"):
            _encoder_decoder_pair(cfg, b)
        else:
            load(_BART)(cfg, b)
    elif family == "encoder":
        load(target or ".encoder_only.encoders:build_encoder")(cfg, b)
    elif family == "text-tower":
        b.vocab = cfg.need("vocab")
        load(".multimodal.vision:build_text_tower")(cfg, b, "text_model", "siglip" if mt.startswith("siglip") else "clip")
        family = "encoder"
    elif family == "vision":
        load(".multimodal.vision:build_vision")(cfg, b)
    elif target is not None:  # a decoder the table names
        load(target)(cfg, b)
    else:
        if _is_blockwise(cfg):  # tested here, so that a plain decoder does not load the blockwise builder
            from hubwatch.estimator.architectures.decoder_only.blockwise import build_blockwise

            build_blockwise(cfg, b)
        else:
            from hubwatch.estimator.architectures.decoder_only.decoders import build_decoder

            build_decoder(cfg, b)
            if isinstance(cfg.raw("mm_vision_tower"), str):
                _named_vision_tower(cfg, b)
            visual = cfg.sub("visual")
            if visual is not None and visual.has("width", "hidden_size"):
                _inline_visual(visual, b, cfg.need("hidden"))
    audio = cfg.sub("audio_config", "audio")
    if audio is not None:
        _audio_tower(audio, b, cfg)
    if mt.startswith("granite_speech"):
        load(".encoder_only.granite_speech:add_granite_speech")(cfg, b)
    return family


def _text_cfg(cfg: Cfg, text: Cfg, default_type: str) -> Cfg:
    data = dict(text.data)
    data.setdefault("model_type", default_type)
    if cfg.has("tie_word_embeddings"):  # the composite's own setting decides (as transformers ties at the top)
        data["tie_word_embeddings"] = cfg.data["tie_word_embeddings"]
    if "vocab_size" not in data and cfg.has("vocab_size"):
        data["vocab_size"] = cfg.data["vocab_size"]
    return Cfg(data, text.path)


def _composite(cfg: Cfg, b: Build) -> None:
    mt = cfg.model_type
    text = cfg.sub("text_config", "llm_config", "language_config", "text_config_dict")
    vision = cfg.sub("vision_config", "vision_config_dict")
    if text is None:
        raise ConfigError(cfg.key("text_config"), "missing: the composite's language model")
    text_type = text.model_type
    from hubwatch.estimator.architectures.multimodal.eva import is_eva

    if vision is not None and (text.has("hf_model_name_or_path") or is_eva(vision)):
        _referencing_dual_tower(cfg, text, vision, b)
        return
    route = ARCHITECTURES.get(mt)
    target = route.target if route is not None and route.branch == "composite" else None
    if vision is not None and target is not None and target != _DUAL_TOWER:  # Mllama
        load(target)(cfg, text, vision, b)
        return
    if vision is not None and (target == _DUAL_TOWER or (text_type.endswith("_text_model")
                                                         and head_kind(cfg, default="base") != "lm")):
        _dual_tower(cfg, text, vision, b)
        return
    from hubwatch.estimator.architectures.decoder_only.decoders import build_decoder
    from hubwatch.estimator.architectures.multimodal.vision import add_projector

    vh = 0
    if vision is not None:
        from hubwatch.estimator.architectures.multimodal.sam import build_sam_vision, is_sam_vision
        from hubwatch.estimator.architectures.multimodal.vision import build_qwen_vision, build_vision_tower, vision_style

        b.tower = "vision_tower"
        if vision.model_type.startswith(("qwen2", "qwen3")):
            vh = build_qwen_vision(vision, b, "visual")
        elif is_sam_vision(vision):
            vh = build_sam_vision(vision, b, "vision_tower")
        else:
            style = vision_style(vision)
            if style == "vit" and vision.model_type not in VISION_TYPES:
                b.guess(f"vision tower {vision.model_type or '(no model_type)'} (counted as a plain ViT)")
            vh = build_vision_tower(vision, b, "vision_tower", style)
        b.tower = None
    tcfg = _text_cfg(cfg, text, "gemma3_text" if mt == "gemma3" else "llama")
    if tcfg.model_type == "modernbert":  # ModernVBERT: a ModernBERT encoder with the composite's head
        from hubwatch.estimator.architectures.encoder_only.modernbert import build_modernbert

        build_modernbert(Cfg({**tcfg.data, "architectures": [cfg.architecture]}, tcfg.path), b)
    else:
        build_decoder(tcfg, b, prefix="language_model", head=head_kind(cfg, default="lm"))
    if vision is not None:
        add_projector(cfg, b, vh, tcfg.need("hidden"))
    elif cfg.has("patch_size") and cfg.has("num_channels"):
        # no vision tower: image patches go straight into the language model through one biased linear
        # (Fuyu's vision_embed_tokens: patch_size² × num_channels → the text width)
        patch = cfg.int("patch_size", default=1, minimum=1) or 1
        channels, th = cfg.int("num_channels", default=3, minimum=1) or 3, tcfg.need("hidden")
        b.add("projector", patch * patch * channels * th + th)
        b.node("vision_embed_tokens", f"linear[{patch * patch * channels}->{th}]", (b.seq, th))


def _dual_tower(cfg: Cfg, text: Cfg, vision: Cfg, b: Build) -> None:
    from hubwatch.estimator.architectures.multimodal.vision import build_text_tower, build_vision_tower

    style = "siglip" if "siglip" in cfg.model_type else "clip"
    b.tower = "text_tower"
    th = build_text_tower(text, b, "text_model", style)
    b.vocab = text.concept("vocab") or 0
    b.max_pos = text.concept("max_pos", minimum=1) or 77  # the context: a text tower reads at most this many tokens
    b.tower = "vision_tower"
    vh = build_vision_tower(vision, b, "vision_model", style)
    b.tower = None
    if style == "clip":
        proj = cfg.int("projection_dim", default=512) or 512
        b.add("projections", th * proj + vh * proj + 1)
        b.node("visual_projection", f"linear[{vh}->{proj}]", (proj,))
        b.node("text_projection", f"linear[{th}->{proj}]", (proj,))
    else:
        b.add("projections", 2)


def _referencing_dual_tower(cfg: Cfg, text: Cfg, vision: Cfg, b: Build) -> None:
    """Jina-CLIP-style towers: a text model named by reference, an EVA or CLIP vision model."""
    from hubwatch.estimator.architectures.decoder_only.decoders import build_decoder
    from hubwatch.estimator.architectures.encoder_only.encoders import build_encoder
    from hubwatch.estimator.architectures.multimodal.eva import build_eva_vision, is_eva
    from hubwatch.estimator.architectures.multimodal.vision import build_vision_tower, vision_style
    from hubwatch.estimator.architectures.referenced import REFERENCED_CONFIGS

    ref = text.str("hf_model_name_or_path")
    base = REFERENCED_CONFIGS.get(ref) if ref else dict(text.data)
    b.tower = "text_tower"
    if base is None:
        b.guess(f"text tower {ref} not counted (referenced, not described)",
                f"text tower {ref} is referenced, not described: not counted")
    else:
        data = {**base, "add_pooling_layer": False}
        kwargs = text.data.get("hf_model_config_kwargs")
        if isinstance(kwargs, dict):
            data.update({k: v for k, v in kwargs.items() if k in ("lora_adaptations", "lora_rank")})
        sub = Cfg(data, text.path)
        if detect_family(sub) == "encoder":
            build_encoder(sub, b, prefix="text_model", head="base")
        else:
            build_decoder(sub, b, prefix="text_model", head="base")
    b.tower = "vision_tower"
    if is_eva(vision):
        build_eva_vision(vision, b, "vision_model")
    else:
        build_vision_tower(vision, b, "vision_model", vision_style(vision))
    b.tower = None


def _named_vision_tower(cfg: Cfg, b: Build) -> None:
    """LLaVA-1.x style: the vision tower is named (mm_vision_tower), the projector described by mm_* keys."""
    from hubwatch.estimator.architectures.multimodal.vision import build_vision_tower
    from hubwatch.estimator.architectures.referenced import REFERENCED_CONFIGS

    name = cfg.str("mm_vision_tower")
    base = REFERENCED_CONFIGS.get(name)
    h = cfg.need("hidden")
    vh = cfg.int("mm_hidden_size", default=None, minimum=1)
    if base is None:
        b.guess(f"vision tower {name} not counted (referenced, not described)",
                f"vision tower {name} is referenced, not described: not counted")
    else:
        b.tower = "vision_tower"
        vh = build_vision_tower(Cfg(base, "mm_vision_tower"), b, "model.vision_tower", "clip")
        b.tower = None
        b.notes.append(f"vision tower {name} counted from its public config (checkpoints often leave it out)")
    if vh:
        kind = cfg.str("mm_projector_type", default="linear")
        depth = int(kind[3]) if kind.startswith("mlp") and kind[3:4].isdigit() else 1
        b.add("projector", vh * h + h + (depth - 1) * (h * h + h))
        b.node("model.mm_projector", f"projector[{kind} {vh}->{h}]", (b.seq, h))


def _inline_visual(visual: Cfg, b: Build, text_hidden: int) -> None:
    """A vision encoder nested as `visual` in a decoder config (Qwen-VL style), with a query resampler
    into the language model's width when `output_dim` is given."""
    from hubwatch.estimator.architectures.multimodal.eva import build_eva_vision, is_eva
    from hubwatch.estimator.architectures.multimodal.vision import build_vision_tower

    b.tower = "vision_tower"
    width = build_eva_vision(visual, b, "transformer.visual") if is_eva(visual) else build_vision_tower(
        visual, b, "transformer.visual", "clip")
    out = visual.int("output_dim", default=0) or 0
    if out:
        queries = visual.int("n_queries", "num_queries", default=256, minimum=1) or 256
        b.add("projector", 2 * queries * out + width * out + 4 * out * out + 4 * out + 6 * out + out * out)
        b.node("transformer.visual.attn_pool", f"resampler[{queries} queries {width}->{out}]", (queries, out))
    b.tower = None
    b.guess("vision resampler", f"inline vision encoder counted (resampler to {out or text_hidden} estimated)")


def _encoder_decoder_pair(cfg: Cfg, b: Build) -> None:
    from hubwatch.estimator.architectures.decoder_only.decoders import build_decoder
    from hubwatch.estimator.architectures.encoder_only.encoders import build_encoder
    from hubwatch.estimator.architectures.multimodal.vision import build_vision_tower, vision_style

    for key in ("encoder", "decoder"):
        sub = cfg.sub(key)
        if sub is None:
            raise ConfigError(cfg.key(key), "missing: an encoder-decoder needs both parts")
        fam = detect_family(sub)
        b.tower = f"{key}_tower"
        if fam == "encoder":
            build_encoder(sub, b, prefix=key, head="base" if key == "encoder" else "mlm")
        elif fam == "vision":
            build_vision_tower(sub, b, key, vision_style(sub))
        else:
            build_decoder(sub, b, prefix=key)
        b.tower = None


def _t5gemma(cfg: Cfg, b: Build) -> None:
    """T5Gemma: a Gemma-2 stack as the encoder and another as the decoder, whose layers add cross-attention
    (query from the decoder, keys and values from the encoder's width) with its two norms; the head is tied."""
    from hubwatch.estimator.architectures.decoder_only.decoders import build_decoder

    for key in ("encoder", "decoder"):
        sub = cfg.sub(key)
        if sub is None:
            raise ConfigError(cfg.key(key), "missing: T5Gemma describes its encoder and decoder as sub-configs")
        part = _text_cfg(cfg, Cfg({**sub.data, "model_type": "gemma2"}, sub.path), "gemma2")
        build_decoder(part, b, prefix=f"model.{key}", name=key, head="base" if key == "encoder" else "lm")
        if key == "decoder":
            h, n = part.need("hidden"), part.need("layers")
            nh, nkv = part.need("heads"), part.concept("kv_heads", minimum=1) or part.need("heads")
            hd = part.concept("head_dim", minimum=1) or h // nh
            enc_h = part.int("cross_attention_hidden_size", default=h, minimum=1) or h
            b.add("attention", n * (h * nh * hd + 2 * enc_h * nkv * hd + nh * hd * h))
            b.add("norms", n * 2 * h)
    b.vocab = cfg.concept("vocab") or b.vocab  # the model's vocabulary (the decoder's, as the head reads it)


def _audio_tower(audio: Cfg, b: Build, parent: Cfg) -> None:
    """A Whisper-style audio encoder (two convolutions, positions, layers, final norm, projection). Rotary
    settings in the audio config mean rotary positions (no learned table); GLM-ASR adds its MLP projector."""
    from hubwatch.estimator.architectures.encoder_decoder.encdec import _bart_layer

    d = audio.need("hidden")
    n = audio.int("encoder_layers", default=None) or audio.need("layers")
    nh = audio.int("encoder_attention_heads", default=None, minimum=1) or audio.need("heads")
    ffn = audio.int("encoder_ffn_dim", default=None, minimum=1) or audio.concept("ffn") or 4 * d
    mels = audio.int("num_mel_bins", "n_mels", default=80) or 80
    ctx = audio.int("max_source_positions", "n_ctx", default=1500) or 1500
    b.divides(nh, d, "attention heads", "hidden size", audio.path)
    nkv = audio.int("num_key_value_heads", default=nh, minimum=1) or nh
    b.divides(nkv, nh, "num_key_value_heads", "attention heads", audio.path)
    rotary = audio.raw("rope_parameters") is not None
    b.tower = "audio_tower"
    b.add("embeddings", mels * d * 3 + d + d * d * 3 + d + (0 if rotary else ctx * d))
    b.node("audio_tower.conv", f"conv1d[{mels}->{d}]x2", (ctx, d))
    layer = _bart_layer(d, nh, ffn, cross=False, k_bias=False)
    if nkv != nh:  # grouped keys and values: the k and v projections shrink
        hd = d // nh
        layer.linears = [(c, lin(s.name, d, nkv * hd, s.bias) if s.name in ("k_proj", "v_proj") else s)
                         for c, s in layer.linears]
    b.stack("audio", "audio_tower.layers", [layer] * n, hidden=d,
            intermediate=ffn, attention=AttentionSpec(nh, nkv, d // nh, ("full",) * n), shape=(ctx, d))
    b.add("norms", 2 * d)
    out = audio.int("output_dim", default=0) or 0
    if out:
        b.add("projector", d * out + out)
    text = parent.sub("text_config")
    if parent.model_type == "glmasr" and text is not None:  # linear_1: merged frames (ffn wide) -> 2x text width
        th = text.need("hidden")
        b.add("projector", ffn * 2 * th + 2 * th + 2 * th * th + th)
        b.node("multi_modal_projector", f"projector[{ffn}->{2 * th}->{th}]", (b.seq, th))
    b.tower = None
