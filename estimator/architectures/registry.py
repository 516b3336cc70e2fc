"""Which builder a model type is counted by: a table of model_type -> builder module, loaded on first need.

A new architecture is a change in this folder only: its module (in the subfolder of its kind, a
builder function taking `(cfg, b)`) and its rows here. `dispatch` reads the table: a row's `branch`
is the family whose builder it is; `by_type` says the model type alone decides that family (a T5
type is an encoder-decoder whatever its keys), where a row without it is used once the config's
keys have put it in that family (ZAYA is counted by its builder when it reads as a decoder). The
module is imported by `load` when a config of that type is first built, so estimating a Llama
never imports the T5, vision or speech builders.

`target` is `module:function`, the module relative to this package (`.decoder_only.zaya`) or an
absolute module path.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

__all__ = ["ARCHITECTURES", "Route", "load", "model_types"]


class Route(NamedTuple):
    """Where a model type is built: the family branch of `dispatch`, the builder, and whether the type
    alone puts a config in that family."""

    branch: str  # "encoder-decoder", "encoder", "decoder", "text-tower", "vision" or "composite"
    target: str  # "module:function"
    by_type: bool = False


def _rows(types: Iterable[str], route: Route) -> dict[str, Route]:
    return dict.fromkeys(types, route)


_T5 = Route("encoder-decoder", ".encoder_decoder.encdec:build_t5", by_type=True)
_BART = Route("encoder-decoder", ".encoder_decoder.encdec:build_bart", by_type=True)
_ENCODER = Route("encoder", ".encoder_only.encoders:build_encoder", by_type=True)
_VISION = Route("vision", ".multimodal.vision:build_vision", by_type=True)
_DUAL_TOWER = Route("composite", ".dispatch:_dual_tower")

ARCHITECTURES: dict[str, Route] = {
    # encoder-decoders
    **_rows(("t5", "mt5", "umt5", "longt5", "switch_transformers"), _T5),
    "t5gemma": Route("encoder-decoder", ".dispatch:_t5gemma", by_type=True),
    "t5gemma2": Route("encoder-decoder", ".encoder_decoder.t5gemma2:build_t5gemma2"),
    "prophetnet": Route("encoder-decoder", ".encoder_decoder.prophetnet:build_prophetnet", by_type=True),
    **_rows(("bart", "mbart", "plbart", "pegasus", "marian", "blenderbot", "blenderbot-small", "m2m_100", "nllb",
             "whisper", "bigbird_pegasus", "fsmt", "speech_to_text", "mvp", "trocr", "led", "nllb-moe"), _BART),
    # encoders
    **_rows(("roberta", "xlm-roberta", "camembert", "data2vec-text", "xlm-roberta-xl", "electra", "mpnet",
             "roberta-prelayernorm", "longformer", "xmod", "distilbert", "deberta", "deberta-v2", "dpr", "nomic_bert",
             "bert-generation", "bert", "albert", "ernie", "megatron-bert", "jina_bert", "xlm", "layoutlm", "splinter",
             "nezha", "roc_bert", "tapas", "gte", "convbert", "luke", "fnet", "squeezebert"), _ENCODER),
    "funnel": Route("encoder", ".encoder_only.funnel:build_funnel", by_type=True),
    "modernbert": Route("encoder", ".encoder_only.modernbert:build_modernbert", by_type=True),
    "mobilebert": Route("encoder", ".encoder_only.mobilebert:build_mobilebert", by_type=True),
    **_rows(("wav2vec2", "hubert"), Route("encoder", ".encoder_only.speech:build_speech", by_type=True)),
    # text towers and vision models
    **_rows(("clip_text_model", "siglip_text_model"), Route("text-tower", ".multimodal.vision:build_text_tower", by_type=True)),
    **_rows(("vit", "deit", "dinov2", "beit", "vit_mae", "vit_msn", "dinov2_with_registers", "clip_vision_model",
             "siglip_vision_model", "idefics3_vision", "siglip2_vision_model", "data2vec-vision"), _VISION),
    # composites (vision + language): built by dispatch's composite branch with both sub-configs
    "mllama": Route("composite", ".multimodal.mllama:build_mllama"),
    **_rows(("clip", "siglip", "siglip2", "chinese_clip", "altclip", "jina_clip", "metaclip_2"), _DUAL_TOWER),
    # decoders: state-space ones by type; the others once their keys read as a decoder
    **_rows(("mamba", "falcon_mamba", "mamba2"), Route("decoder", ".decoder_only.ssm:build_mamba", by_type=True)),
    "xlnet": Route("decoder", ".decoder_only.decoders:build_xlnet"),
    **_rows(("musicgen_decoder", "musicgen_melody_decoder"), Route("decoder", ".encoder_decoder.encdec:build_musicgen")),
    "modernbert-decoder": Route("decoder", ".encoder_only.modernbert:build_modernbert"),  # ModernBERT's blocks, causal
    **_rows(("zamba", "zamba2", "recurrent_gemma", "rwkv"), Route("decoder", ".decoder_only.recurrent:build_recurrent")),
    "gemma3n_text": Route("decoder", ".decoder_only.gemma3n:build_gemma3n"),
    "cpmant": Route("decoder", ".decoder_only.cpmant:build_cpmant"),
    "hrm_text": Route("decoder", ".decoder_only.hrm:build_hrm_text"),
    "reformer": Route("decoder", ".decoder_only.reformer:build_reformer"),
    "git": Route("decoder", ".multimodal.git:build_git"),
    "neomme": Route("decoder", ".multimodal.neomme:build_neomme"),
    "longcat_flash": Route("decoder", ".decoder_only.longcat:build_longcat_flash"),
    "zaya": Route("decoder", ".decoder_only.zaya:build_zaya"),
    "perceiver": Route("decoder", ".encoder_only.perceiver:build_perceiver"),
    "inkling_text": Route("decoder", ".decoder_only.inkling:build_inkling"),
    **_rows(("inkling2_text", "inkling2_loop_text"), Route("decoder", ".decoder_only.inkling:build_inkling_like")),
}

_LOADED: dict[str, Callable[..., Any]] = {}


def load(target: str) -> Callable[..., Any]:
    """The builder a route names, its module imported on first use."""
    found = _LOADED.get(target)
    if found is None:
        module, _, name = target.partition(":")
        found = _LOADED[target] = getattr(importlib.import_module(module, __package__), name)
    return found


def model_types(target: str) -> frozenset[str]:
    """Every model type the table sends to one builder."""
    return frozenset(mt for mt, route in ARCHITECTURES.items() if route.target == target)
