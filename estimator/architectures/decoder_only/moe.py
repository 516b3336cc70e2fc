"""Mixture-of-experts feed-forward layers: router, routed experts, shared experts, and which layers are sparse."""

from __future__ import annotations

import math

from hubwatch.estimator.params.blocks import Layer, ffn_linears, lin
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.architectures.decoder_only.profiles import DecoderProfile
from hubwatch.estimator.frozen import mutable
from hubwatch.estimator.params.spec import LinearSpec

__all__ = ["MoE", "jetmoe_layer", "moe_layers", "moe_spec"]


@mutable
class MoE:
    """A sparse feed-forward block: its experts, how many a token uses, their width, linears and the rest."""

    experts: int
    top_k: int
    intermediate: int
    linears: list[tuple[str, LinearSpec]]
    extra: int
    node_type: str


def moe_spec(cfg: Cfg, h: int, ffn: int, p: DecoderProfile) -> MoE | None:
    """The sparse feed-forward block a config describes, or None for a dense model."""
    if cfg.has("is_moe") and not cfg.bool("is_moe"):  # Doge: num_experts sizes a CDMoE that is_moe switches off
        cfg.concept("experts")
        cfg.concept("experts_per_tok")
        return None
    experts = cfg.concept("experts", minimum=0)
    if not experts or experts <= 1:
        return None
    if cfg.model_type == "doge":
        return _cdmoe(cfg, h, ffn, experts)
    top_k = cfg.concept("experts_per_tok", default=2, minimum=1) or 1
    inter = cfg.concept("expert_ffn", default=ffn, minimum=1) or ffn
    biased = cfg.model_type == "gpt_oss"
    linears = [("router", lin("gate", h, experts, biased))]
    linears += ffn_linears(h, inter, gated=p.gated, bias=biased, component="experts", count=experts,
                           active=min(top_k, experts))
    shared_note = ""
    n_shared = cfg.concept("shared_experts", default=0) or 0
    shared_size = cfg.concept("shared_ffn", default=0) or 0
    if n_shared and not shared_size:
        shared_size = inter * n_shared
    if cfg.model_type.startswith("llama4"):  # one always-on expert the size of the routed ones
        shared_size = inter
    if shared_size:
        linears += ffn_linears(h, shared_size, gated=p.gated, bias=False, component="shared_experts",
                               names=("shared_gate_proj", "shared_up_proj", "shared_down_proj"))
        shared_note = f" +shared {shared_size}"
        if cfg.has("shared_expert_intermediate_size") and cfg.model_type.startswith("qwen"):
            linears.append(("router", lin("shared_expert_gate", h, 1)))
    # a per-expert routing bias stored as a parameter (ERNIE 4.5's statistics, AFMoE's expert_bias)
    extra = experts if cfg.model_type.startswith(("ernie4_5_moe", "afmoe")) else 0
    return MoE(experts, top_k, inter, linears, extra, f"moe[{min(top_k, experts)} of {experts} x {inter}{shared_note}]")


def _cdmoe(cfg: Cfg, h: int, ffn: int, experts: int) -> MoE:
    """Doge's DogeCDMoE (transformers models/doge): a shared gated MLP at intermediate_size, a router to
    2 x floor(sqrt(num_experts)) product keys, and each expert a row of two embedding tables (down_embed, up_embed)."""
    top_k = cfg.concept("experts_per_tok", default=2, minimum=1) or 1
    keys = math.isqrt(experts)
    bias = cfg.bool("mlp_bias")
    linears = ffn_linears(h, ffn, gated=True, bias=bias, component="shared_experts")
    linears += [("router", lin("router_gate", h, 2 * keys)),
                ("experts", lin("down_embed", h, 1, count=experts, active=min(top_k, experts))),
                ("experts", lin("up_embed", h, 1, count=experts, active=min(top_k, experts)))]
    return MoE(experts, top_k, 1, linears, 0, f"cdmoe[{min(top_k, experts)} of {experts} rows +shared {ffn}]")


def moe_layers(cfg: Cfg, n: int, moe: MoE) -> list[bool]:
    """For each layer, whether its feed-forward block is the sparse one."""
    kinds = cfg.str_list("mlp_layer_types")
    if kinds is not None:  # per layer: "sparse" / "moe" or "dense"
        return [i < len(kinds) and kinds[i] in ("sparse", "moe", "moe_mlp") for i in range(n)]
    listed = cfg.int_list("moe_layers")
    if listed is not None:
        chosen = set(listed)
        return [i in chosen for i in range(n)]
    if cfg.has("interleave_moe_layer_step"):
        step = cfg.int("interleave_moe_layer_step", default=1, minimum=1) or 1
        return [(i + 1) % step == 0 for i in range(n)]
    if cfg.has("expert_layer_period"):
        period = cfg.int("expert_layer_period", minimum=1) or 1
        offset = cfg.int("expert_layer_offset", default=0) or 0
        return [i % period == offset for i in range(n)]
    if cfg.has("first_k_dense_replace", "moe_layer_freq", "num_dense_layers"):  # the first k layers dense
        first = cfg.int("first_k_dense_replace", "num_dense_layers", default=0) or 0
        freq = cfg.int("moe_layer_freq", default=1, minimum=1) or 1
        return [i >= first and i % freq == 0 for i in range(n)]
    if cfg.has("moe_layer_start_index", "moe_layer_end_index", "moe_layer_interval"):  # ERNIE 4.5
        start = cfg.int("moe_layer_start_index", default=0) or 0
        end = cfg.int("moe_layer_end_index", default=n - 1)
        every = cfg.int("moe_layer_interval", default=1, minimum=1) or 1
        return [start <= i <= (n - 1 if end is None or end < 0 else end) and (i - start) % every == 0
                for i in range(n)]
    if cfg.has("decoder_sparse_step", "mlp_only_layers"):
        step = cfg.int("decoder_sparse_step", default=1, minimum=1) or 1
        dense = set(cfg.int_list("mlp_only_layers") or [])
        return [i not in dense and (i + 1) % step == 0 for i in range(n)]
    return [True] * n


def jetmoe_layer(cfg: Cfg, h: int, nkv: int, hd: int, norms: int) -> Layer:
    """JetMoE: a shared key/value projection and attention experts (each an input and an output projection),
    then MLP experts (gated), each mixture with a router and an output bias; no dense attention output."""
    experts = cfg.concept("experts", minimum=1) or 1
    top_k = min(cfg.concept("experts_per_tok", default=2, minimum=1) or 1, experts)
    ffn = cfg.concept("ffn", minimum=1) or 4 * h
    width = nkv * hd
    layer = Layer(f"moa[{top_k} of {experts} x {width}]", f"moe[{top_k} of {experts} x {ffn}]", [
        ("attention", lin("kv_proj", h, 2 * width)), ("router", lin("self_attention.experts.router", h, experts)),
        ("experts", lin("self_attention.experts.input_linear", h, width, count=experts, active=top_k)),
        ("experts", lin("self_attention.experts.output_linear", width, h, count=experts, active=top_k)),
        ("router", lin("mlp.router", h, experts))]
        + ffn_linears(h, ffn, gated=True, bias=False, fused_gate="mlp.input_linear",
                      names=("mlp.input_linear", "mlp.input_linear", "mlp.output_linear"), component="experts",
                      count=experts, active=top_k))
    layer.more("attention", h)
    layer.more("experts", h)
    layer.more("norms", norms)
    return layer
