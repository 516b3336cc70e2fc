"""Falcon / RefinedWeb decoders: fused multi-query or grouped QKV, parallel attention, one or two norms."""

from __future__ import annotations

from hubwatch.estimator.config import Cfg
from hubwatch.estimator.architectures.decoder_only.profiles import DecoderProfile, apply_keys

__all__ = ["falcon_profile"]


def falcon_profile(cfg: Cfg) -> DecoderProfile:
    new_arch = cfg.bool("new_decoder_architecture") or cfg.model_type == "RefinedWeb"
    parallel = cfg.bool("parallel_attn", default=True)
    if new_arch:
        norms = cfg.int("num_ln_in_parallel_attn", default=2) or 2
    else:
        norms = 1 if parallel else 2
    bias = cfg.bool("bias")
    base = DecoderProfile(norm="ln", layer_norms=norms, qkv_bias=bias, o_bias=bias, mlp_bias=bias, gated=False,
                          tie=True, positions="alibi" if cfg.bool("alibi") else "rotary", fused_qkv="query_key_value",
                          names=("query_key_value",) * 3 + ("dense", "dense_h_to_4h", "dense_h_to_4h", "dense_4h_to_h"))
    return apply_keys(cfg, base)
