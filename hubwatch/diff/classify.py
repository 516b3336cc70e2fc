"""The change taxonomy's rules: which kind a JSON key belongs to, its severity and direction.

Keys are classified from the leaf towards the root, so `rope_scaling.factor` is a context change,
`text_config.vocab_size` an architecture change and `auto_map.AutoConfig` custom code.
"""

from __future__ import annotations

import re
from typing import Any

from hubwatch.domain.records import Direction, Kind, Severity
from hubwatch.estimator.config import ALIASES, architecture_keys, concept_keys

from .changes import UPDATE, HAZARD
from .jsondiff import MISSING, KeyChange

__all__ = ["DEFAULT_SEVERITY", "FileRole", "classify_key", "direction_for", "holds_expert_count", "key_hazards",
           "severity_for"]

FileRole = str  # "config" | "generation" | "tokenizer" | "processor"

SPECIAL_TOKEN_KEY = re.compile(
    r"^(bos|eos|pad|unk|sep|cls|mask|gmask|eop|end|decoder_start|forced_bos|forced_eos)"
    r"_token(_id|_ids|s)?$"
)
SPECIAL_TOKEN_FLAGS = frozenset({"add_bos_token", "add_eos_token", "additional_special_tokens", "stop_words_ids"})
METADATA_KEYS = frozenset(
    {
        "transformers_version",
        "_name_or_path",
        "name_or_path",
        "_commit_hash",
        "_from_model_config",
        "special_tokens_map_file",
        "tokenizer_file",
        "_attn_implementation_autoset",
    }
)
# The sizes and counts the estimator reads (its one concept/alias table, estimator/config.py) are the
# architecture and context keys: a concept has one kind whatever its spelling (`moe_num_experts`,
# `num_local_experts`, `n_routed_experts` …). The lists below hold only what no concept names.
_CONTEXT_SETTINGS = frozenset(
    {
        "sliding_window", "use_sliding_window", "max_window_layers", "sliding_window_pattern",
        "attention_window", "layer_types", "rope_scaling", "rope_theta", "rope_parameters",
        "rotary_emb_base", "rope_ratio", "use_dynamic_ntk", "use_logn_attn",
        "original_max_position_embeddings", "rotary_pct", "rotary_dim", "partial_rotary_factor",
        "position_embedding_type",
    }
)  # fmt: skip
_ARCHITECTURE_SETTINGS = frozenset(
    {
        "model_type", "architectures", "architecture", "multi_query", "multi_query_attention",
        "tie_word_embeddings", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "v_head_dim",
        "qk_nope_head_dim", "first_k_dense_replace", "new_decoder_architecture", "parallel_attn",
        "alibi", "hidden_act", "activation_function", "text_config", "vision_config", "audio_config",
    }
)  # fmt: skip
CONCEPT_ARCHITECTURE_KEYS = architecture_keys()
CONCEPT_CONTEXT_KEYS = concept_keys("context")
CONTEXT_KEYS = _CONTEXT_SETTINGS | CONCEPT_CONTEXT_KEYS
ARCHITECTURE_KEYS = _ARCHITECTURE_SETTINGS | CONCEPT_ARCHITECTURE_KEYS
# Spellings of an expert count: where one sits beside it, `top_k` is experts per token, not sampling.
EXPERT_COUNT_KEYS = frozenset(ALIASES["experts"])
DTYPE_KEYS = frozenset(
    {"torch_dtype", "dtype", "params_dtype", "bf16", "fp16", "fp32", "quantization_config", "compression_config"}
)
GENERATION_KEYS = frozenset(
    {
        "max_length", "min_length", "max_new_tokens", "min_new_tokens", "do_sample", "temperature",
        "top_p", "top_k", "min_p", "typical_p", "repetition_penalty", "num_beams",
        "num_beam_groups", "no_repeat_ngram_size", "length_penalty", "early_stopping",
        "num_return_sequences", "diversity_penalty", "bad_words_ids", "suppress_tokens",
        "begin_suppress_tokens", "chat_format",
    }
)  # fmt: skip
CUSTOM_CODE_KEYS = frozenset({"auto_map"})
# Spellings both of a structural concept and of a generation setting (transformers wrote `top_k: 50`
# into every config.json it saved before generation_config.json): architecture only in an object
# that counts experts (`routed`), as the estimator reads them only there.
ROUTING_OR_GENERATION_KEYS = CONCEPT_ARCHITECTURE_KEYS & GENERATION_KEYS

DEFAULT_SEVERITY: dict[Kind, Severity] = {
    Kind.ARCHITECTURE: Severity.HIGH,
    Kind.CONTEXT: Severity.MEDIUM,
    Kind.SPECIAL_TOKENS: Severity.HIGH,
    Kind.TOKENIZER: Severity.MEDIUM,
    Kind.CHAT_TEMPLATE: Severity.HIGH,
    Kind.GENERATION_DEFAULTS: Severity.LOW,
    Kind.DTYPE: Severity.MEDIUM,
    Kind.WEIGHTS: Severity.MEDIUM,
    Kind.CUSTOM_CODE: Severity.HIGH,
    Kind.PICKLE: Severity.HIGH,
    Kind.LICENSE: Severity.MEDIUM,
    Kind.CARD: Severity.LOW,
    Kind.FILES: Severity.LOW,
    Kind.CONFIG: Severity.LOW,
    Kind.METADATA: Severity.INFO,
    Kind.SCHEMA: Severity.HIGH,
    Kind.SPLITS: Severity.MEDIUM,
    Kind.DATA_FILES: Severity.MEDIUM,
    Kind.SUBSETS: Severity.MEDIUM,
}


def _kind_of_name(name: str, *, concepts: bool, routed: bool) -> Kind | None:
    if name in ROUTING_OR_GENERATION_KEYS and concepts:
        return Kind.ARCHITECTURE if routed else Kind.GENERATION_DEFAULTS
    if name in METADATA_KEYS:
        return Kind.METADATA
    if SPECIAL_TOKEN_KEY.match(name) or name in SPECIAL_TOKEN_FLAGS:
        return Kind.SPECIAL_TOKENS
    if name in CUSTOM_CODE_KEYS:
        return Kind.CUSTOM_CODE
    if name in _CONTEXT_SETTINGS or (concepts and name in CONCEPT_CONTEXT_KEYS):
        return Kind.CONTEXT
    if name in DTYPE_KEYS:
        return Kind.DTYPE
    if name in _ARCHITECTURE_SETTINGS or (concepts and name in CONCEPT_ARCHITECTURE_KEYS):
        return Kind.ARCHITECTURE
    if name in GENERATION_KEYS:
        return Kind.GENERATION_DEFAULTS
    return None


def classify_key(role: FileRole, path: tuple[str, ...], *, routed: bool = False) -> Kind:
    """The kind of a changed key in a file of the given role.

    The estimator's concept spellings count in model and tokenizer files, not in a processor's (an
    image processor's `size.width` is no hidden size); `routed`: the object holding the key counts
    experts (see ROUTING_OR_GENERATION_KEYS)."""
    concepts = role != "processor"
    for depth, name in enumerate(reversed(path)):
        kind = _kind_of_name(name, concepts=concepts, routed=routed and depth == 0)
        if kind is not None:
            if role == "generation" and kind in (Kind.ARCHITECTURE, Kind.CONTEXT, Kind.DTYPE):
                return Kind.GENERATION_DEFAULTS  # e.g. max_length in generation_config
            return kind
    if role == "generation":
        return Kind.GENERATION_DEFAULTS
    if role == "tokenizer":
        return Kind.TOKENIZER
    return Kind.CONFIG


def holds_expert_count(holder: Any) -> bool:
    """Whether a parsed JSON object (the one holding a changed key) sets an expert count."""
    return isinstance(holder, dict) and any(holder.get(key) is not None for key in EXPERT_COUNT_KEYS)


_BOS_EOS = re.compile(r"^(bos|eos)_token(_id|_ids)?$")


def _empty(value: Any) -> bool:
    return value is MISSING or value is None or value == "" or value == [] or value == {}


def direction_for(kind: Kind, change: KeyChange) -> Direction:
    """HAZARD when this key change brings one of the model's hazards (docs/advisories.md), else UPDATE.

    Key-level hazards: custom code added (`auto_map` or one of its entries) and a bos/eos token
    removed (the key gone or emptied, or `add_bos_token` turned off). Every other key change is an
    update: pins before it lack what upstream changed.
    """
    return HAZARD if key_hazards("", kind, change)[0] else UPDATE


def key_hazards(file: str, kind: Kind, change: KeyChange) -> tuple[list[str], list[str]]:
    """(hazard keys this key change brings, hazard keys it clears) — matched by advise_match."""
    key = change.key
    if kind is Kind.CUSTOM_CODE:
        token = f"code:{file}:{key}"
        if change.op == "added":
            return [token], []
        return ([], [token]) if change.op == "removed" else ([], [])
    if kind is not Kind.SPECIAL_TOKENS:
        return [], []
    token = f"token:{file}:{key}"
    if change.leaf == "add_bos_token":
        if change.old is True and change.new is not True:
            return [token], []
        return ([], [token]) if change.new is True and change.old is not True else ([], [])
    if not _BOS_EOS.match(change.leaf):
        return [], []
    if _empty(change.new) and not _empty(change.old):
        return [token], []  # the bos/eos token is gone
    return ([], [token]) if _empty(change.old) and not _empty(change.new) else ([], [])  # defined again


def severity_for(kind: Kind, change: KeyChange) -> Severity:
    """Severity of one key change of a kind (see docs/changes.md)."""
    if kind is Kind.CUSTOM_CODE:
        return {"added": Severity.HIGH, "changed": Severity.MEDIUM, "removed": Severity.LOW}[change.op]
    base = DEFAULT_SEVERITY[kind]
    explicit_default = (change.old is MISSING and change.new is None) or (
        change.old is None and change.new is MISSING
    )
    if explicit_default and base.rank > Severity.LOW.rank:
        return Severity.LOW  # `null` written out or dropped: the default either way
    return base
