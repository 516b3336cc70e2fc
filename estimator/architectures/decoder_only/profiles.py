"""Per model_type defaults for decoder-only models: norms, biases, positions, tying, module names.

A config's own keys (attention_bias, mlp_bias, tie_word_embeddings, …) override these; a model_type
not listed here gets a profile inferred from which keys the config has (see `infer_profile`).
"""

from __future__ import annotations

from hubwatch.estimator.config import Cfg
from hubwatch.estimator.frozen import frozen

__all__ = ["DecoderProfile", "PROFILES", "profile_for"]

LLAMA_NAMES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@frozen
class DecoderProfile:
    """A decoder family's defaults: norms, biases, gating, positions, tying, fused projections and module names."""

    norm: str = "rms"  # rms | ln | ln_nobias | none
    layer_norms: int = 2
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    gated: bool = True
    qk_norm: str = ""  # "" | head (per head_dim) | full (over all heads) | head_ln (LayerNorm per head)
    final_norm: bool = True
    tie: bool = False
    positions: str = "rotary"  # rotary | learned | alibi | none
    pos_offset: int = 0
    lm_head_bias: bool = False
    embed_norm: bool = False
    fused_qkv: str = ""
    fused_gate: str = ""
    names: tuple[str, ...] = LLAMA_NAMES
    ffn_default: int = 4  # ffn = this × hidden when the config gives no size
    ffn_halved: bool = False  # the config's ffn size counts both gated halves (Qwen-1)
    sinks: bool = False
    sub_norms: bool = False  # BitNet: a norm inside attention (hidden) and inside the MLP (intermediate)
    attn_gate: bool = False  # Qwen3-Next/3.5: q_proj also yields a per-head output gate (twice as wide)


_P = DecoderProfile
GPT2_NAMES = ("c_attn", "c_attn", "c_attn", "c_proj", "c_fc", "c_fc", "c_proj")
PROFILES: dict[str, DecoderProfile] = {
    "llama": _P(), "mistral": _P(), "mixtral": _P(), "granite": _P(), "granitemoe": _P(tie=True),
    "granitemoeshared": _P(tie=True), "yi": _P(), "internlm": _P(), "internlm2": _P(), "deepseek": _P(),
    "deepseek_v2": _P(), "deepseek_v3": _P(), "deepseek_v32": _P(), "glm_moe_dsa": _P(), "ernie4_5_moe": _P(), "ernie4_5": _P(), "smollm3": _P(tie=True), "hunyuan": _P(),
    "phi3": _P(fused_qkv="qkv_proj", fused_gate="gate_up_proj"), "phimoe": _P(norm="ln", qkv_bias=True, o_bias=True),
    "qwen2": _P(qkv_bias=True), "qwen2_vl": _P(qkv_bias=True), "qwen2_vl_text": _P(qkv_bias=True),
    "qwen2_5_vl": _P(qkv_bias=True), "qwen2_5_vl_text": _P(qkv_bias=True), "qwen2_moe": _P(qkv_bias=True), "qwen3": _P(qk_norm="head"),
    "qwen3_moe": _P(qk_norm="head"), "qwen3_next": _P(qk_norm="head", attn_gate=True),
    "qwen3_5_text": _P(qk_norm="head", attn_gate=True), "qwen3_5_moe_text": _P(qk_norm="head", attn_gate=True),
    "ctrl": _P(norm="ln", qkv_bias=True, o_bias=True, mlp_bias=True, gated=False, tie=True, positions="none",
               lm_head_bias=True, names=("Wq", "Wk", "Wv", "dense", "ffn.0", "ffn.0", "ffn.2")),
    "afmoe": _P(layer_norms=4, qk_norm="head", attn_gate=True),  # its attention output gate: an h→heads linear
    "hrm_text": _P(norm="none", attn_gate=True),  # estimator/architectures/decoder_only/hrm.py: weightless norms, a sigmoid gate per head
    "olmo_hybrid": _P(qk_norm="full"), "kimi_linear": _P(), "minimax": _P(), "jetmoe": _P(tie=True),
    "gemma": _P(tie=True), "gemma2": _P(tie=True, layer_norms=4), "gemma3_text": _P(tie=True, layer_norms=4, qk_norm="head"),
    "gemma3": _P(tie=True, layer_norms=4, qk_norm="head"), "vaultgemma": _P(tie=True),
    "gemma4_text": _P(tie=True, layer_norms=4, qk_norm="head"),
    "llama4": _P(), "llama4_text": _P(), "mistral3": _P(), "ministral": _P(), "qwen3_vl_text": _P(qk_norm="head"),
    "olmo": _P(norm="none"), "olmo2": _P(qk_norm="full"), "olmoe": _P(qk_norm="full"),
    "cohere": _P(norm="ln_nobias", layer_norms=1, tie=True), "cohere2": _P(norm="ln_nobias", layer_norms=1, tie=True),
    "starcoder2": _P(norm="ln", qkv_bias=True, o_bias=True, mlp_bias=True, gated=False, tie=True,
                     names=("q_proj", "k_proj", "v_proj", "o_proj", "c_fc", "c_fc", "c_proj")),
    "stablelm": _P(norm="ln"), "stablelm_epoch": _P(norm="ln"),
    "phi": _P(norm="ln", layer_norms=1, qkv_bias=True, o_bias=True, mlp_bias=True, gated=False, lm_head_bias=True,
              names=("q_proj", "k_proj", "v_proj", "dense", "fc1", "fc1", "fc2")),
    "gpt2": _P(norm="ln", qkv_bias=True, o_bias=True, mlp_bias=True, gated=False, tie=True, positions="learned",
               fused_qkv="c_attn", names=GPT2_NAMES),
    "gpt_bigcode": _P(norm="ln", qkv_bias=True, o_bias=True, mlp_bias=True, gated=False, tie=True,
                      positions="learned", fused_qkv="c_attn", names=GPT2_NAMES),
    "gpt_neox": _P(norm="ln", qkv_bias=True, o_bias=True, mlp_bias=True, gated=False, fused_qkv="query_key_value",
                   names=("query_key_value",) * 3 + ("dense", "dense_h_to_4h", "dense_h_to_4h", "dense_4h_to_h")),
    "gptj": _P(norm="ln", layer_norms=1, mlp_bias=True, gated=False, lm_head_bias=True,
               names=("q_proj", "k_proj", "v_proj", "out_proj", "fc_in", "fc_in", "fc_out")),
    "codegen": _P(norm="ln", layer_norms=1, mlp_bias=True, gated=False, lm_head_bias=True, fused_qkv="qkv_proj",
                  names=("qkv_proj",) * 3 + ("out_proj", "fc_in", "fc_in", "fc_out")),
    "gpt_neo": _P(norm="ln", o_bias=True, mlp_bias=True, gated=False, tie=True, positions="learned",
                  names=("q_proj", "k_proj", "v_proj", "out_proj", "c_fc", "c_fc", "c_proj")),
    "opt": _P(norm="ln", qkv_bias=True, o_bias=True, mlp_bias=True, gated=False, tie=True, positions="learned",
              pos_offset=2, names=("q_proj", "k_proj", "v_proj", "out_proj", "fc1", "fc1", "fc2")),
    "bloom": _P(norm="ln", qkv_bias=True, o_bias=True, mlp_bias=True, gated=False, tie=True, positions="alibi",
                embed_norm=True, fused_qkv="query_key_value",
                names=("query_key_value",) * 3 + ("dense", "dense_h_to_4h", "dense_h_to_4h", "dense_4h_to_h")),
    "mpt": _P(norm="ln_nobias", gated=False, tie=True, positions="alibi", fused_qkv="Wqkv",
              names=("Wqkv",) * 3 + ("out_proj", "up_proj", "up_proj", "down_proj")),
    "qwen": _P(qkv_bias=True, fused_qkv="c_attn", ffn_halved=True,
               names=("c_attn",) * 3 + ("c_proj", "w1", "w2", "c_proj")),
    "gpt_oss": _P(qkv_bias=True, o_bias=True, sinks=True),
    "lfm2": _P(tie=True, qk_norm="head", names=("q_proj", "k_proj", "v_proj", "out_proj", "w1", "w3", "w2")),
    "exaone": _P(), "jamba": _P(), "bamba": _P(), "bitnet": _P(sub_norms=True),
    "dbrx": _P(norm="ln_nobias", fused_qkv="Wqkv"), "llava_llama": _P(), "llava_mistral": _P(),
    "llava_qwen": _P(qkv_bias=True), "falcon_h1": _P(), "granitemoehybrid": _P(tie=True), "nemotron": _P(norm="ln", gated=False), "minicpm": _P(tie=True),
}


# Classes whose _tied_weights_keys is empty: the LM head is its own matrix whatever tie_word_embeddings says
# (KimiLinearForCausalLM in transformers 5.24.0; MllamaForCausalLM and xLSTMForCausalLM build the same count
# tied or untied on the meta device, benchmarks/data/transformers_perturbed.json).
_NEVER_TIED = frozenset({"kimi_linear", "mllama_text_model", "xlstm"})


def profile_for(cfg: Cfg) -> tuple[DecoderProfile, bool]:
    """The profile for this config and whether the model_type was known."""
    mt = cfg.model_type
    known = mt in PROFILES or mt == "chatglm"
    if mt == "chatglm":
        base = _chatglm(cfg)
    else:
        base = PROFILES[mt] if known else infer_profile(cfg)
    return apply_keys(cfg, base), known


def _chatglm(cfg: Cfg) -> DecoderProfile:
    """ChatGLM-6B (LayerNorm, GeLU, biased) or ChatGLM2/3 (RMSNorm, SwiGLU, MQA groups)."""
    names = ("query_key_value",) * 3 + ("dense", "dense_h_to_4h", "dense_h_to_4h", "dense_4h_to_h")
    if cfg.has("rmsnorm", "multi_query_attention", "ffn_hidden_size"):
        return DecoderProfile(fused_qkv="query_key_value", fused_gate="dense_h_to_4h", names=names,
                              final_norm=cfg.bool("post_layer_norm", default=True))
    return DecoderProfile(norm="ln", qkv_bias=True, o_bias=True, mlp_bias=True, gated=False, tie=True,
                          fused_qkv="query_key_value", names=names)


# Activations whose MLP is an up and a down projection, no gate (Nemotron/Arcee/nanochat ReLU², Apertus xIELU).
_UP_DOWN_ACTS = {"relu2", "xielu", "squared_relu", "relu_squared"}


def infer_profile(cfg: Cfg) -> DecoderProfile:
    """A profile read from what the keys say, for model types this table does not know."""
    ln = cfg.has("layer_norm_eps", "layer_norm_epsilon", "layernorm_epsilon") and not cfg.has("rms_norm_eps")
    if cfg.bool("rmsnorm", default=False):
        ln = False
    # No activation named: a config that sizes its MLP is modern (SwiGLU); one that leaves it at 4× is GPT-style.
    default_act = "silu" if cfg.concept("ffn") is not None else "gelu"
    act = (cfg.str("hidden_act", "activation_function", "activation", "hidden_activation") or default_act).lower()
    gated = any(a in act for a in ("silu", "swiglu", "swish", "glu")) or cfg.bool("block_use_swiglu", "gated_mlp",
                                                                                 "is_gated_act", default=False)
    up_down_only = act in _UP_DOWN_ACTS
    if not ln and cfg.has("rms_norm_eps") and not cfg.has("is_gated_act", "gated_mlp", "block_use_swiglu") \
            and not up_down_only:
        gated = True  # RMSNorm decoders gate a GeLU MLP too (Gemma's GeGLU); ReLU² and xIELU MLPs are up/down only
    pos = "rotary"
    if cfg.has("n_positions") and not cfg.has("rotary_dim", "rope_theta", "rotary_pct", "rotary_emb_base"):
        pos = "learned"
    if cfg.str("position_embedding_type", "pos_emb") in ("absolute", "learned"):
        pos = "learned"
    if cfg.bool("alibi", "use_alibi", default=False) or cfg.str("position_embedding_type") == "alibi":
        pos = "alibi"
    # transformers saves tie_word_embeddings only when it differs from its default (true): absent means tied.
    return DecoderProfile(norm="ln" if ln else "rms", gated=gated, positions=pos,
                          mlp_bias=ln, qkv_bias=ln, o_bias=ln, tie=cfg.bool("tie_word_embeddings", default=True))


def apply_keys(cfg: Cfg, p: DecoderProfile) -> DecoderProfile:
    """Config keys that switch biases, norms and tying on or off override the profile."""
    changes: dict[str, object] = {}
    if cfg.has("attention_bias"):
        b = cfg.bool("attention_bias")
        changes.update(qkv_bias=b or p.qkv_bias and cfg.model_type.startswith("qwen2"), o_bias=b)
    for k in ("use_qkv_bias", "add_qkv_bias", "qkv_bias"):
        if cfg.has(k):
            changes["qkv_bias"] = cfg.bool(k)
    if cfg.has("mlp_bias"):
        changes["mlp_bias"] = cfg.bool("mlp_bias")
    if cfg.has("add_bias_linear"):
        b = cfg.bool("add_bias_linear")
        changes.update(o_bias=b, mlp_bias=b)
    if cfg.has("bias") and isinstance(cfg.raw("bias"), bool):  # InternLM-style: attention projections only
        b = cfg.bool("bias")
        changes.update(qkv_bias=b, o_bias=b)
    if cfg.has("use_bias"):
        b = cfg.bool("use_bias")
        changes.update(qkv_bias=b, o_bias=b, mlp_bias=b)
    if cfg.has("no_bias"):
        b = not cfg.bool("no_bias")
        changes.update(o_bias=b, mlp_bias=b)
        if p.norm == "ln_nobias" or cfg.model_type == "mpt":
            changes["qkv_bias"] = b
    if cfg.has("qk_layernorm", "use_qk_norm"):
        if cfg.bool("qk_layernorm", "use_qk_norm"):
            per_head = cfg.model_type in ("stablelm", "stablelm_epoch", "cohere", "cohere2")  # one norm per head
            changes["qk_norm"] = p.qk_norm or ("full" if per_head else "head_ln" if p.norm == "ln" else "head")
        else:
            changes["qk_norm"] = ""
    if cfg.has("rmsnorm"):
        changes["norm"] = "rms" if cfg.bool("rmsnorm") else "ln"
    if cfg.has("use_parallel_residual") and cfg.model_type in ("stablelm", "stablelm_epoch"):
        changes["layer_norms"] = 1 if cfg.bool("use_parallel_residual") else 2
    if cfg.has("tie_word_embeddings", "tie_embedding", "tie_word_embedding"):
        changes["tie"] = cfg.bool("tie_word_embeddings", "tie_embedding", "tie_word_embedding")
    if cfg.model_type in _NEVER_TIED:
        changes["tie"] = False
    # The profile's fields (its __dict__ holds nothing else) with the changes: `replace` without its per-field walk.
    return DecoderProfile(**(vars(p) | changes)) if changes else p
