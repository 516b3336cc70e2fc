"""Reading transformers-style configs: key aliases, nested sub-configs and strict value checks."""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Mapping
from contextvars import ContextVar, Token
from typing import Any

__all__ = ["ALIASES", "CONCEPT_ROLES", "Cfg", "ConfigError", "LIMITS", "Reads", "architecture_keys", "concept_keys",
           "reading"]

# The keys the builders asked about while one config is analysed, by sub-config path (see `reading`):
# what is left unread is evidence of a mechanism the estimate did not model.
Reads = dict[builtins.str, set[builtins.str]]
_READS: ContextVar[Reads | None] = ContextVar("hubwatch_estimator_reads", default=None)


class reading:  # noqa: N801 - a context manager used as `with reading() as reads`, as contextlib's were
    """Records every key any `Cfg` is asked about inside the block: {sub-config path: keys}.

    A class rather than a `contextmanager` generator: one analysis enters it once, and the generator's
    machinery cost more than the recording it sets up."""

    __slots__ = ("reads", "_token")
    _token: Token[Reads | None]

    def __init__(self) -> None:
        self.reads: Reads = {}

    def __enter__(self) -> Reads:
        self._token = _READS.set(self.reads)
        return self.reads

    def __exit__(self, *exc: object) -> None:
        _READS.reset(self._token)


class ConfigError(ValueError):
    """A config the estimator cannot read; `key` names the offending key (dotted for nested ones)."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}" if key else problem)
        self.key = key
        self.problem = problem


# Concept → the keys different model families use for it, most specific first. The one alias table:
# tests/estimator/test_estimator_zoo.py checks it against the attribute_map of every transformers config
# class (stored in benchmarks/data/transformers_zoo.json).
ALIASES: dict[str, tuple[str, ...]] = {
    "hidden": ("hidden_size", "n_embd", "d_model", "n_embed", "model_dim", "dim", "embed_dim",
               "block_dim", "n_state", "width", "emb_dim"),
    "layers": ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "num_blocks", "depth", "encoder_layers",
               "num_encoder_layers", "decoder_layers"),
    "heads": ("num_attention_heads", "n_head", "num_heads", "n_heads", "attention_heads", "encoder_attention_heads",
              "num_encoder_attention_heads", "decoder_attention_heads"),
    "kv_heads": ("num_key_value_heads", "num_kv_heads", "n_head_kv", "n_kv_heads",
                 "multi_query_group_num", "num_kv", "kv_n_heads"),
    "ffn": ("intermediate_size", "ffn_hidden_size", "n_inner", "d_ff", "ffn_dim", "inner_hidden_size",
            "block_ff_dim", "hidden_dim", "mlp_dim", "ffn_inner_dim", "dim_ff", "dff", "encoder_ffn_dim",
            "moe_intermediate_size", "expert_ffn_hidden_size"),
    "expert_ffn": ("moe_intermediate_size", "expert_intermediate_size", "expert_ffn_hidden_size",
                   "moe_ffn_hidden_size", "expert_hidden_size"),
    "shared_ffn": ("shared_expert_intermediate_size", "shared_intermediate_size", "moe_shared_expert_intermediate_size"),
    "shared_experts": ("n_shared_experts", "num_shared_experts", "moe_num_shared_experts", "shared_expert_count"),
    "vocab": ("padded_vocab_size", "vocab_size", "n_vocab", "tgt_vocab_size"),
    "max_pos": ("max_position_embeddings", "n_positions", "max_sequence_length", "max_seq_len",
                "seq_length", "n_ctx", "max_seq_length", "max_target_positions", "context_length",
                "model_max_length"),
    "head_dim": ("head_dim", "kv_channels", "d_kv", "attention_head_size", "attention_head_dim"),
    "experts": ("num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts", "n_experts"),
    "experts_per_tok": ("num_experts_per_tok", "experts_per_token", "moe_top_k", "top_k",
                        "num_experts_per_token", "moe_k", "moe_topk"),
    "norm_eps": ("rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "layernorm_epsilon",
                 "norm_eps", "eps"),
}

# What each concept describes, for readers outside the estimator (the diff engine's change kinds come from it):
# "structure" sizes or counts the model's tensors, "context" is the sequence length it is built for,
# "numerics" changes no shape. A concept added to ALIASES is structural unless it is listed here.
CONCEPT_ROLES: dict[str, str] = {concept: "structure" for concept in ALIASES} | {"max_pos": "context",
                                                                               "norm_eps": "numerics"}


def concept_keys(role: str) -> frozenset[str]:
    """Every spelling (ALIASES) of every concept of one role ("structure", "context", "numerics")."""
    return frozenset(key for concept, keys in ALIASES.items() if CONCEPT_ROLES[concept] == role for key in keys)


def architecture_keys() -> frozenset[str]:
    """Every spelling of every structural concept: the keys whose change reshapes the model."""
    return concept_keys("structure")


# The key an error names when a concept is missing, where it is not the first alias (transformers' usual name).
_USUAL_KEY = {"vocab": "vocab_size"}

# Sizes beyond these are not a real model: refuse rather than compute for minutes.
LIMITS: dict[str, int] = {
    "layers": 100_000,
    "hidden": 10_000_000,
    "heads": 1_000_000,
    "kv_heads": 1_000_000,
    "ffn": 100_000_000,
    "vocab": 100_000_000,
    "max_pos": 10_000_000_000,
    "head_dim": 1_000_000,
    "experts": 1_000_000,
    "experts_per_tok": 1_000_000,
    "expert_ffn": 100_000_000,
    "shared_ffn": 100_000_000,
    "shared_experts": 1_000_000,
}
DEFAULT_LIMIT = 1_000_000_000


class Cfg:
    """A read-only view over one (sub-)config with alias lookup and validated numbers."""

    def __init__(self, data: Mapping[builtins.str, Any], path: builtins.str = "") -> None:
        if not isinstance(data, Mapping):
            raise ConfigError(path or "config", f"expected a JSON object, got {type(data).__name__}")
        self.data = data
        self.path = path
        self._model_type: builtins.str | None = None  # read once (the view is read-only); every read still counts
        # The recording `reads` this view last wrote to and its set of keys for this path (one lookup per view).
        self._reads: Reads | None = None
        self._seen: set[builtins.str] = set()

    def key(self, name: builtins.str) -> builtins.str:
        return f"{self.path}.{name}" if self.path else name

    def _read(self, keys: tuple[builtins.str, ...]) -> None:
        reads = _READS.get()
        if reads is None:
            return
        if reads is not self._reads:
            seen = reads.get(self.path)
            if seen is None:
                seen = reads[self.path] = set()
            self._reads, self._seen = reads, seen
        self._seen.update(keys)

    def has(self, *keys: builtins.str) -> builtins.bool:
        reads = _READS.get()  # `_read`, inlined in the most frequent readers (has, _first, _int)
        if reads is not None:
            if reads is self._reads:
                self._seen.update(keys)
            else:
                self._read(keys)
        data = self.data
        for k in keys:
            if data.get(k) is not None:
                return True
        return False

    def raw(self, *keys: builtins.str) -> Any:
        self._read(keys)
        data = self.data
        for k in keys:
            v = data.get(k)
            if v is not None:
                return v
        return None

    def first_key(self, *keys: builtins.str) -> builtins.str | None:
        return self._first(keys)

    def _first(self, keys: tuple[builtins.str, ...]) -> builtins.str | None:
        """`first_key` with the keys as one tuple (the typed readers pass theirs on as they came)."""
        reads = _READS.get()  # `_read`, inlined
        if reads is not None:
            if reads is self._reads:
                self._seen.update(keys)
            else:
                self._read(keys)
        data = self.data
        for k in keys:
            if data.get(k) is not None:
                return k
        return None

    def int(self, *keys: builtins.str, default: builtins.int | None = None, minimum: builtins.int = 0,
            limit: builtins.int = DEFAULT_LIMIT) -> builtins.int | None:
        """The first present key as a whole number in [minimum, limit]; `default` when none is set."""
        return self._int(keys, default, minimum, limit)

    def _int(self, keys: tuple[builtins.str, ...], default: builtins.int | None, minimum: builtins.int,
             limit: builtins.int) -> builtins.int | None:
        reads = _READS.get()  # `_first`, inlined
        if reads is not None:
            if reads is self._reads:
                self._seen.update(keys)
            else:
                self._read(keys)
        data = self.data
        for k in keys:
            v = data.get(k)
            if v is not None:
                break
        else:
            return default
        if type(v) is not int:  # (a plain int needs none of these checks)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ConfigError(self.key(k), f"expected a whole number, got {type(v).__name__} {v!r:.40}")
            if isinstance(v, float):
                if not math.isfinite(v) or v != int(v):
                    raise ConfigError(self.key(k), f"expected a whole number, got {v!r}")
                v = int(v)
        if v < minimum:
            raise ConfigError(self.key(k), f"must be at least {minimum}, got {v}")
        if limit == DEFAULT_LIMIT and ("layer" in k or k.endswith(("_groups", "group_num"))):
            limit = LIMITS["layers"]  # anything that repeats blocks must stay a real depth
        if v > limit:
            raise ConfigError(self.key(k), f"{v} is beyond any real model (limit {limit})")
        return v

    def concept(self, name: builtins.str, default: builtins.int | None = None,
                minimum: builtins.int = 0) -> builtins.int | None:
        return self._int(ALIASES[name], default, minimum, LIMITS.get(name, DEFAULT_LIMIT))

    def need(self, name: builtins.str, minimum: builtins.int = 1) -> builtins.int:
        """A concept that must be present (hidden size, layers, …)."""
        v = self.concept(name, minimum=minimum)
        if v is None:
            primary = _USUAL_KEY.get(name, ALIASES[name][0])
            others = [k for k in ALIASES[name] if k != primary][:3]
            raise ConfigError(self.key(primary), f"missing (also looked for {', '.join(others)})")
        return v

    def float(self, *keys: builtins.str, default: builtins.float | None = None) -> builtins.float | None:
        k = self._first(keys)
        if k is None:
            return default
        v = self.data[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ConfigError(self.key(k), f"expected a number, got {v!r:.40}")
        return float(v)

    def bool(self, *keys: builtins.str, default: builtins.bool = False) -> builtins.bool:
        k = self._first(keys)
        if k is None:
            return default
        v = self.data[k]
        if isinstance(v, bool):
            return v
        if isinstance(v, int) and v in (0, 1):
            return bool(v)
        raise ConfigError(self.key(k), f"expected true or false, got {v!r:.40}")

    def str(self, *keys: builtins.str, default: builtins.str = "") -> builtins.str:
        k = self._first(keys)
        if k is None:
            return default
        v = self.data[k]
        if not isinstance(v, str):
            raise ConfigError(self.key(k), f"expected a string, got {type(v).__name__}")
        return v

    def sub(self, *keys: builtins.str) -> Cfg | None:
        """A nested config (text_config, vision_config, encoder, …) as its own view."""
        self._read(keys)
        for k in keys:
            v = self.data.get(k)
            if v is None:
                continue
            if not isinstance(v, Mapping):
                raise ConfigError(self.key(k), f"expected a nested config object, got {type(v).__name__}")
            return Cfg(v, self.key(k))
        return None

    def int_list(self, key: builtins.str, limit: builtins.int = 100_000) -> list[builtins.int] | None:
        return self._list(key, limit, lambda i: isinstance(i, int) and not isinstance(i, bool), "whole numbers")

    def str_list(self, key: builtins.str, limit: builtins.int = 100_000) -> list[builtins.str] | None:
        return self._list(key, limit, lambda i: isinstance(i, str), "strings")

    def _list(self, key: builtins.str, limit: builtins.int, ok: Callable[[Any], builtins.bool],
              what: builtins.str) -> list[Any] | None:
        self._read((key,))
        v = self.data.get(key)
        if v is None:
            return None
        if not isinstance(v, (list, tuple)) or len(v) > limit:
            raise ConfigError(self.key(key), f"expected a list of {what}")
        for item in v:
            if not ok(item):
                raise ConfigError(self.key(key), f"expected a list of {what}, got {item!r:.40} in it")
        return list(v)

    @property
    def model_type(self) -> builtins.str:
        if self._model_type is None:
            self._model_type = self.str("model_type")
        else:
            self._read(("model_type",))
        return self._model_type

    @property
    def architecture(self) -> builtins.str:
        self._read(("architectures",))
        archs = self.data.get("architectures")
        if isinstance(archs, (list, tuple)) and archs and isinstance(archs[0], str):
            return archs[0]
        return ""

    def num_labels(self) -> builtins.int:
        self._read(("id2label", "num_labels"))
        labels = self.data.get("id2label")
        if isinstance(labels, Mapping) and labels:
            return min(len(labels), 10_000_000)
        return self.int("num_labels", "_num_labels", default=2) or 0
