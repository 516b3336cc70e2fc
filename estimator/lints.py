"""Lint rules on a config (and optional tokenizer/generation configs), each finding with a fix."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hubwatch.estimator.config import Cfg
from hubwatch.estimator.frozen import frozen

__all__ = ["Finding", "LintContext", "RULES", "lint", "merge_special_tokens"]


@frozen
class Finding:
    """One lint finding: its rule, level, message and fix."""

    rule: str
    level: str  # error | warning | info
    message: str
    fix: str

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "level": self.level, "message": self.message, "fix": self.fix}


@frozen
class LintContext:
    """What the lint rules read: the configs, family, sizes, tokenizer and generation config of one model."""

    cfg: Cfg  # the config of the text model (nested text_config for composites)
    root: Cfg
    family: str
    params: int
    layers: int  # the deepest single stack (a vision or audio tower counts apart from the text model)
    vocab: int
    max_pos: int | None
    final_norm: bool
    tokenizer: Mapping[str, Any] | None
    generation: Mapping[str, Any] | None


Rule = Callable[[LintContext], list[Finding]]


def merge_special_tokens(tokenizer_config: Mapping[str, Any] | None,
                         special_tokens_map: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The tokenizer config with special_tokens_map.json's tokens filled in where it names none (older repos
    keep pad/eos/bos there only; transformers reads both), for the tokenizer lints."""
    if not isinstance(special_tokens_map, Mapping) or not special_tokens_map:
        return None if tokenizer_config is None else dict(tokenizer_config)
    merged = dict(tokenizer_config or {})
    for key, value in special_tokens_map.items():
        if isinstance(key, str) and key.endswith("_token") and merged.get(key) is None:
            merged[key] = value
    return merged


def _ids(value: object) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
    return []


def kv_heads(c: LintContext) -> list[Finding]:
    nh = c.cfg.concept("heads")
    kv = c.cfg.concept("kv_heads")
    if nh and kv and nh % kv:
        return [Finding("kv-heads-divide-heads", "error", f"num_key_value_heads ({kv}) does not divide "
                        f"num_attention_heads ({nh}): grouped-query attention cannot repeat KV heads",
                        f"set num_key_value_heads to a divisor of {nh} (e.g. {max(d for d in range(1, kv + 1) if nh % d == 0)})")]
    return []


def heads_hidden(c: LintContext) -> list[Finding]:
    h, nh = c.cfg.concept("hidden"), c.cfg.concept("heads")
    if h and nh and h % nh and c.cfg.concept("head_dim") is None:  # an explicit head size (T5's d_kv) decides
        return [Finding("heads-divide-hidden", "error", f"num_attention_heads ({nh}) does not divide hidden_size ({h})",
                        "set head_dim explicitly or choose a head count that divides hidden_size")]
    return []


def vocab_tokenizer(c: LintContext) -> list[Finding]:
    out = []
    special = {k: c.root.data.get(k) for k in ("bos_token_id", "eos_token_id", "pad_token_id")}
    tok_ids: list[int] = []
    if c.tokenizer:
        added = c.tokenizer.get("added_tokens_decoder")
        if isinstance(added, Mapping):
            tok_ids = [int(k) for k in added if isinstance(k, str) and k.isdigit()]
    bad = [(k, i) for k, v in special.items() for i in _ids(v) if c.vocab and i >= c.vocab]
    for key, i in bad:
        out.append(Finding("token-id-beyond-vocab", "error", f"{key} {i} is not below vocab_size {c.vocab}",
                           f"resize the embeddings to at least {i + 1} or fix {key}"))
    if tok_ids and c.vocab and max(tok_ids) >= c.vocab:
        out.append(Finding("vocab-smaller-than-tokenizer", "error",
                           f"the tokenizer emits id {max(tok_ids)} but vocab_size is {c.vocab}",
                           f"resize_token_embeddings to at least {max(tok_ids) + 1} and save the config"))
    return out


def eos_generation(c: LintContext) -> list[Finding]:
    if c.generation is None:
        return []
    cfg_eos = set(_ids(c.root.data.get("eos_token_id")) + _ids(c.cfg.data.get("eos_token_id")))
    gen_eos = set(_ids(c.generation.get("eos_token_id")))
    if not gen_eos and cfg_eos and c.generation.get("_from_model_config") is True:
        return []  # transformers rebuilds a generation config saved "from the model config" from config.json
    if not gen_eos:
        return [Finding("eos-missing-from-generation-config", "warning",
                        "generation_config.json has no eos_token_id: generation may never stop",
                        f"set eos_token_id in generation_config.json{' to ' + str(sorted(cfg_eos)) if cfg_eos else ''}")]
    if cfg_eos and not cfg_eos & gen_eos:
        return [Finding("eos-mismatch", "warning", f"config eos_token_id {sorted(cfg_eos)} and generation_config "
                        f"eos_token_id {sorted(gen_eos)} share no id", "make generation_config list the chat end token too")]
    return []


def rope_scaling(c: LintContext) -> list[Finding]:
    rs = c.cfg.data.get("rope_scaling") or c.cfg.data.get("rope_parameters")
    if not isinstance(rs, Mapping) or c.max_pos is None:
        return []
    factor, orig = rs.get("factor"), rs.get("original_max_position_embeddings")
    orig = orig or c.cfg.data.get("original_max_position_embeddings")
    kind = rs.get("rope_type") or rs.get("type")
    if isinstance(factor, (int, float)) and isinstance(orig, int) and kind in ("yarn", "linear", "dynamic", "llama3"):
        if orig > c.max_pos:
            return [Finding("rope-scaling-inconsistent", "warning", f"rope_scaling original_max_position_embeddings "
                            f"({orig}) exceeds max_position_embeddings ({c.max_pos})",
                            "set max_position_embeddings to the extended context")]
        # llama3 scales only the low frequencies (Llama 3.1 ships factor 8 × 8192 for 131072): no simple product
        if kind in ("yarn", "linear") and orig * factor < c.max_pos * 0.99:
            return [Finding("rope-scaling-inconsistent", "warning", f"rope_scaling {kind} factor {factor} × "
                            f"{orig} = {int(orig * factor)} is below max_position_embeddings ({c.max_pos})",
                            "raise the factor or lower max_position_embeddings to what the scaling covers")]
    return []


def float32_large(c: LintContext) -> list[Finding]:
    dtype = c.root.str("torch_dtype", "dtype") or c.cfg.str("torch_dtype", "dtype")
    if dtype == "float32" and c.params > 1_000_000_000:
        return [Finding("float32-large-model", "warning", f"torch_dtype float32 on a {c.params / 1e9:.1f}B model: "
                        f"{c.params * 4 / 2**30:.0f} GiB of weights", "store and load in bfloat16 (torch_dtype: bfloat16)")]
    return []


def custom_code(c: LintContext) -> list[Finding]:
    if isinstance(c.root.data.get("auto_map"), Mapping):
        return [Finding("custom-code-required", "warning", "auto_map points at code in the repo: loading needs "
                        "trust_remote_code=True and runs that code", "pin the revision, review the .py files, "
                        "or use a native transformers architecture")]
    return []


def final_norm(c: LintContext) -> list[Finding]:
    # Post-norm layers (OPT-350m's do_layer_norm_before: false) end normalised without a final norm.
    post_norm = any(c.cfg.data.get(k) is False for k in ("do_layer_norm_before", "normalize_before", "pre_norm"))
    if c.family == "decoder" and not c.final_norm and not post_norm:
        return [Finding("no-norm-before-output", "warning", "no normalisation layer before the output head: "
                        "pre-norm residual streams reach the LM head unnormalised", "enable the final norm "
                        "(e.g. post_layer_norm: true)")]
    return []


def deep_init(c: LintContext) -> list[Finding]:
    keys = ("use_scaled_init", "scale_attn_by_inverse_layer_idx", "residual_multiplier", "use_depth_scaled_init",
            "init_method_std", "output_layer_init_method", "initializer_factor", "depth_init", "init_std")
    if c.layers >= 48 and not any(c.cfg.has(k) or c.root.has(k) for k in keys):
        return [Finding("deep-stack-without-depth-scaled-init", "info", f"{c.layers} layers with no depth-scaled "
                        "initialisation setting: training from scratch may diverge",
                        "scale residual output projections by 1/sqrt(2·layers) when initialising")]
    return []


def pad_token(c: LintContext) -> list[Finding]:
    """Padding is the tokenizer's: judged only when its config is known (a config alone cannot tell)."""
    if c.family not in ("decoder", "composite") or c.tokenizer is None or c.tokenizer.get("pad_token"):
        return []
    if isinstance(c.tokenizer.get("auto_map"), Mapping):
        return []  # a tokenizer class from the repo's code may define its pad token there (ChatGLM does)
    return [Finding("pad-token-missing", "info", "the tokenizer defines no pad_token: tokenizer(..., padding=True) "
                    "fails, and batched generation or fine-tuning needs one",
                    "set pad_token in tokenizer_config.json (a reserved token, or the eos token) and pad_token_id "
                    "in config.json")]


def context_lengths(c: LintContext) -> list[Finding]:
    out = []
    tok_max = c.tokenizer.get("model_max_length") if c.tokenizer else None
    if isinstance(tok_max, int) and c.max_pos and c.max_pos < tok_max < 10**12:
        out.append(Finding("tokenizer-longer-than-model", "warning", f"tokenizer model_max_length {tok_max} exceeds "
                           f"max_position_embeddings {c.max_pos}", f"set model_max_length to {c.max_pos}"))
    window = c.cfg.data.get("sliding_window")
    if isinstance(window, int) and c.max_pos and window > c.max_pos and c.cfg.data.get("use_sliding_window") is not False:
        out.append(Finding("sliding-window-beyond-context", "info", f"sliding_window {window} exceeds "
                           f"max_position_embeddings {c.max_pos}: the window never applies",
                           "drop sliding_window or set it below the context length"))
    return out


def experts(c: LintContext) -> list[Finding]:
    e, k = c.cfg.concept("experts"), c.cfg.concept("experts_per_tok")
    if e and k and k > e:
        return [Finding("experts-per-token-exceeds-experts", "error", f"{k} experts per token but only {e} experts",
                        f"set num_experts_per_tok ≤ {e}")]
    return []


def quantized(c: LintContext) -> list[Finding]:
    q = c.root.data.get("quantization_config")
    if isinstance(q, Mapping):
        method = q.get("quant_method", "unknown")
        return [Finding("quantization-config", "info", f"config carries quantization_config ({method}): weights are "
                        "stored quantized; derived counts are for the unquantized architecture",
                        "compare with the manifest's dtypes; load with the matching quantizer installed")]
    return []


def use_cache(c: LintContext) -> list[Finding]:
    if c.family in ("decoder", "composite") and c.cfg.data.get("use_cache") is False:
        return [Finding("use-cache-disabled", "info", "use_cache is false: generation recomputes every token",
                        "set use_cache: true for inference (it was likely left from training)")]
    return []


# Generation settings and their defaults (transformers' GenerationConfig): non-default ones belong in
# generation_config.json, not in config.json.
# (Length, sampling and beam settings only: forced/suppressed token ids are class defaults of BART or Whisper.)
_GENERATION_DEFAULTS: dict[str, object] = {
    "max_length": 20, "min_length": 0, "do_sample": False, "early_stopping": False, "num_beams": 1,
    "num_beam_groups": 1, "diversity_penalty": 0.0, "temperature": 1.0, "top_k": 50, "top_p": 1.0, "typical_p": 1.0,
    "repetition_penalty": 1.0, "length_penalty": 1.0, "no_repeat_ngram_size": 0, "encoder_no_repeat_ngram_size": 0,
    "bad_words_ids": None, "num_return_sequences": 1,
}


def generation_in_config(c: LintContext) -> list[Finding]:
    moved = {k: c.root.data[k] for k, default in _GENERATION_DEFAULTS.items()
             if k in c.root.data and c.root.data[k] != default}
    if not moved:
        return []
    shown = ", ".join(f"{k}={v!r}" for k, v in list(moved.items())[:4]) + (" …" if len(moved) > 4 else "")
    return [Finding("generation-params-in-config", "info", f"config.json sets generation parameters ({shown}): "
                    "transformers falls back to them only without a generation_config.json, and warns",
                    f"move {', '.join(moved)} to generation_config.json and drop them from config.json")]


RULES: tuple[Rule, ...] = (kv_heads, heads_hidden, vocab_tokenizer, eos_generation, rope_scaling, float32_large,
                           custom_code, final_norm, deep_init, pad_token, context_lengths, experts, quantized, use_cache,
                           generation_in_config)


def lint(ctx: LintContext) -> list[Finding]:
    out: list[Finding] = []
    for rule in RULES:
        out.extend(rule(ctx))
    return out
