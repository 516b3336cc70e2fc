"""Hybrid stacks: which layers mix tokens with attention, short convolutions, Mamba state-space mixers or
linear attention (Gated DeltaNet: Qwen3-Next, Qwen3.5, OLMo-hybrid; Kimi Delta Attention; MiniMax's
Lightning attention)."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Layer, lin
from hubwatch.estimator.config import Cfg

__all__ = ["linear_attention_kind", "linear_attention_mixer", "mamba1_mixer", "mamba2_mixer", "mixer_kinds"]

_SSM_NAMES = {"mamba", "mamba2", "ssm", "m"}
_ATTENTION_NAMES = {"full_attention", "sliding_attention", "attention", "chunked_attention", "global", "local",
                    "full", "sliding", "a", "*", "hybrid"}
LINEAR_KINDS = ("gated_deltanet", "kda", "lightning")


def linear_attention_kind(cfg: Cfg) -> str | None:
    """Which linear-attention mixer the keys describe: Gated DeltaNet (key/value head counts and widths),
    Kimi Delta Attention (one head count and width), Lightning (MiniMax: block size, attention heads)."""
    if cfg.has("linear_num_value_heads", "linear_num_key_heads", "linear_key_head_dim", "linear_value_head_dim"):
        return "gated_deltanet"
    if cfg.has("linear_num_heads", "linear_head_dim"):
        return "kda"
    if cfg.has("linear_attn_alpha_factor", "block_size") and cfg.has("num_attention_heads"):
        return "lightning"
    return None


def mixer_kinds(cfg: Cfg, n: int) -> list[str] | None:
    """Per layer: attention, conv, mamba1 or mamba2; None when every layer is plain attention."""
    if cfg.has("mamba_d_ssm") or cfg.model_type == "falcon_h1":  # Falcon-H1: attention and Mamba side by side
        return ["parallel"] * n
    ssm = "mamba1" if cfg.has("mamba_dt_rank") else "mamba2"
    names = cfg.str_list("layer_types") or cfg.str_list("layers_block_type")
    if names:
        kinds = []
        linear = linear_attention_kind(cfg)
        for t in names[:n]:
            if t in _SSM_NAMES:
                kinds.append(ssm)
            elif t in ("conv", "short_conv"):
                kinds.append("conv")
            elif t == "linear_attention":
                kinds.append(linear or "unknown:linear_attention")
            elif t in _ATTENTION_NAMES:
                kinds.append("attention")
            elif "attention" in t or "attn" in t:  # a variant of attention (indexed, compressed, …)
                kinds.append(f"attention-like:{t}")
            else:
                kinds.append(f"unknown:{t}")
        return kinds if any(k != "attention" for k in kinds) else None
    if cfg.has("full_attn_idxs"):
        full = set(cfg.int_list("full_attn_idxs") or [])
        return ["attention" if i in full else "conv" for i in range(n)]
    if cfg.has("attn_layer_period"):
        period = cfg.int("attn_layer_period", minimum=1) or 1
        offset = cfg.int("attn_layer_offset", default=0) or 0
        return ["attention" if i % period == offset else ssm for i in range(n)]
    if cfg.has("mamba_n_heads", "mamba_d_state") and not cfg.has("layer_types"):
        listed = set(cfg.int_list("attn_layer_indices") or [])
        return ["attention" if i in listed else ssm for i in range(n)]
    return None


def _first_int(cfg: Cfg, keys: tuple[str, ...], default: int) -> int:
    v = cfg.int(*keys, default=default, minimum=1)
    return v or default


def mamba2_mixer(cfg: Cfg, h: int) -> Layer:
    """Mamba-2: one input projection (x, z, B, C, dt), grouped conv, per-head decay, gated norm, output."""
    heads = _first_int(cfg, ("mamba_n_heads", "mamba_num_heads", "num_heads"), 1)
    head_dim = _first_int(cfg, ("mamba_d_head", "mamba_head_dim", "head_dim"), 64)
    groups = _first_int(cfg, ("mamba_n_groups", "n_groups"), 1)
    state = _first_int(cfg, ("mamba_d_state", "ssm_state_size", "state_size"), 128)
    kernel = _first_int(cfg, ("mamba_d_conv", "conv_kernel"), 4)
    inner = cfg.int("mamba_d_ssm", default=heads * head_dim, minimum=1) or heads * head_dim
    proj_bias = cfg.bool("mamba_proj_bias", "use_bias")
    conv_bias = cfg.bool("mamba_conv_bias", "use_conv_bias", default=True)
    conv_dim = inner + 2 * groups * state
    layer = Layer(f"mixer[mamba2 {heads}x{head_dim} d_state={state}]", "", [
        ("ssm", lin("in_proj", h, 2 * inner + 2 * groups * state + heads, proj_bias)),
        ("ssm", lin("out_proj", inner, h, proj_bias))])
    gated_norm = inner if cfg.bool("mamba_rms_norm", default=True) else 0
    layer.more("ssm", conv_dim * kernel + (conv_dim if conv_bias else 0) + 3 * heads + gated_norm)
    return layer


def mamba1_mixer(cfg: Cfg, h: int) -> Layer:
    """Mamba-1 (Jamba-style, with RMS norms on dt, B and C)."""
    inner = _first_int(cfg, ("mamba_expand", "expand"), 2) * h
    state = _first_int(cfg, ("mamba_d_state", "state_size"), 16)
    kernel = _first_int(cfg, ("mamba_d_conv", "conv_kernel"), 4)
    rank = cfg.int("mamba_dt_rank", "time_step_rank", default=None, minimum=1) or -(-h // 16)
    proj_bias = cfg.bool("mamba_proj_bias", "use_bias")
    conv_bias = cfg.bool("mamba_conv_bias", "use_conv_bias", default=True)
    layer = Layer(f"mixer[mamba d_state={state}]", "", [
        ("ssm", lin("in_proj", h, 2 * inner, proj_bias)), ("ssm", lin("x_proj", inner, rank + 2 * state)),
        ("ssm", lin("dt_proj", rank, inner, True)), ("ssm", lin("out_proj", inner, h, proj_bias))])
    layer.more("ssm", inner * kernel + (inner if conv_bias else 0) + inner * state + inner
               + (rank + 2 * state if cfg.model_type == "jamba" else 0))
    return layer


def linear_attention_mixer(cfg: Cfg, h: int, kind: str) -> Layer:
    """A linear-attention mixer (`kind` from `linear_attention_kind`), its projections and small tensors."""
    kernel = _first_int(cfg, ("linear_conv_kernel_dim", "conv_kernel"), 4)
    if kind == "gated_deltanet":  # q, k, v (fused or not), output gate z, decay a and beta b, conv, gated norm
        nk = _first_int(cfg, ("linear_num_key_heads",), 16)
        nv = _first_int(cfg, ("linear_num_value_heads",), nk)
        dk = _first_int(cfg, ("linear_key_head_dim",), 128)
        dv = _first_int(cfg, ("linear_value_head_dim",), dk)
        key, value = nk * dk, nv * dv
        layer = Layer(f"linear_attn[gated-deltanet {nk}/{nv}x{dk}/{dv}]", "", [
            ("attention", lin("in_proj_qkv", h, 2 * key + value)), ("attention", lin("in_proj_z", h, value)),
            ("attention", lin("in_proj_b", h, nv)), ("attention", lin("in_proj_a", h, nv)),
            ("attention", lin("out_proj", value, h))])
        layer.more("attention", (2 * key + value) * kernel + 2 * nv + dv)
        return layer
    if kind == "kda":  # Kimi Delta Attention: q, k, v, conv, low-rank forget and output gates, beta, norm
        nh = _first_int(cfg, ("linear_num_heads",), 32)
        hd = _first_int(cfg, ("linear_head_dim",), 128)
        width = nh * hd
        layer = Layer(f"linear_attn[kda {nh}x{hd}]", "", [
            ("attention", lin("q_proj", h, width)), ("attention", lin("k_proj", h, width)),
            ("attention", lin("v_proj", h, width)), ("attention", lin("f_a_proj", h, hd)),
            ("attention", lin("f_b_proj", hd, width)), ("attention", lin("b_proj", h, nh)),
            ("attention", lin("g_a_proj", h, hd)), ("attention", lin("g_b_proj", hd, width)),
            ("attention", lin("o_proj", width, h))])
        layer.more("attention", 3 * width * kernel + width + nh + hd)
        return layer
    # Lightning attention (MiniMax): fused q/k/v, output gate, norm over all heads, output projection
    nh = _first_int(cfg, ("num_attention_heads",), 32)
    hd = cfg.int("head_dim", default=None, minimum=1) or h // nh
    width = nh * hd
    layer = Layer(f"linear_attn[lightning {nh}x{hd}]", "", [
        ("attention", lin("qkv_proj", h, 3 * width)), ("attention", lin("output_gate", h, width)),
        ("attention", lin("out_proj", width, h))])
    layer.more("attention", width)
    return layer
