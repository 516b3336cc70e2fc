"""`Support`: how far an estimate's parameter count is modelled, and the evidence for it.

Three levels (`params.support` in every estimate):

- `modelled`: every mechanism the config describes is modelled; expected within 1% of the real count;
- `approximate`: a generic or partial model; `guessed` lists which parts are guessed;
- `unsupported`: no number; `reason` says why and `key` names the config key that stopped it.

The level is decided from evidence, never from a list of answers: the builders say where they fall
back on a guess (`Build.guess`), and every config key that could change the count (a size, a
count, a layer list, a bias or tying switch, a nested sub-config) that no builder read is a
mechanism the estimate did not model (`unread_structural_keys`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from hubwatch.estimator.frozen import frozen

__all__ = ["APPROXIMATE", "MODELLED", "UNSUPPORTED", "Support", "assess", "unread_structural_keys"]

MODELLED, APPROXIMATE, UNSUPPORTED = "modelled", "approximate", "unsupported"
LEVELS = (MODELLED, APPROXIMATE, UNSUPPORTED)


class _Words:
    """`re.search` of an alternation of words (letters, digits, `_`), each maybe anchored by `^` and `$`,
    answered with `in`, `startswith` and `endswith`: the same answer for every key, and nothing to
    compile at import (as regexes, the alternations below took about 3 ms of `hubwatch estimate`)."""

    __slots__ = ("inside", "pattern", "prefixes", "suffixes", "whole")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        inside: list[str] = []
        prefixes: list[str] = []
        suffixes: list[str] = []
        whole: set[str] = set()
        for word in pattern.split("|"):
            start, end = word.startswith("^"), word.endswith("$")
            core = word[start:len(word) - end]
            if not core.replace("_", "").isalnum() or not core.isascii():
                raise ValueError(f"{word!r}: only words, optionally anchored with ^ and $, can be matched")
            ends = (core, core + "\n")  # `$` also matches before a final newline
            if start and end:
                whole.update(ends)
            elif start:
                prefixes.append(core)
            elif end:
                suffixes.extend(ends)
            else:
                inside.append(core)
        self.inside, self.prefixes, self.suffixes, self.whole = tuple(inside), tuple(prefixes), tuple(suffixes), whole

    def search(self, key: str) -> bool:
        return (key.startswith(self.prefixes) or key.endswith(self.suffixes) or key in self.whole
                or any(word in key for word in self.inside))


# Words in a key name that say it may size or switch a parameter tensor.
_STRUCTURAL = _Words(
    r"size|dim|^num_|^n_|_num$|_num_|layers|layer_types|expert|rank|vocab|heads|kernel|groups|ratio|ffn|"
    r"intermediate|lora|adapter|proj|embed|width|depth|conv|per_layer|shared|dense|moe|mlp|_bias$|^bias$|^use_bias|"
    r"tie_|norm_type|qk_norm|qk_layernorm|_layernorm$|gate|altup|laurel|block|expand|state|entity|pool|"
    r"sparse|^d_|_d_")
# Keys that match the words above but never change a parameter count (regularisation, numerics,
# generation, positions computed at run time, routing behaviour, caching, special tokens).
_INERT = _Words(
    r"eps|epsilon|dropout|initializ|_range$|token_id|_prob$|rope|theta|_scale$|scaling|scale_factor|"
    r"max_position|sliding_window|window_size|temperature|_factor$|_std$|chunk_size_feed|cache|threshold|"
    r"_coef$|aux_loss|jitter|capacity|bucket|max_length|_loss|norm_topk|routed_scaling|_seed$|"
    r"output_router|router_z|_id$|_ids$|pad_|bos_|eos_|num_labels|label|problem_type|task_|torch_dtype|"
    r"^dtype$|use_return_dict|return_|output_|num_beams|num_return|max_new|min_length|no_repeat|"
    r"decoder_start|forced_|suppress|begin_suppress|early_stopping|length_penalty|diversity|top_p|top_k_|"
    r"num_beam_groups|chunk_size$|attention_chunk|num_memory|mem_len|block_size_feed|_block_size$|"
    r"max_window_layers|n_group$|topk_group|topk_method|scoring_func|seq_aux|norm_topk|router_|"
    r"mask|mode$|precision|quant|use_cache|tp_plan|pp_plan|_implementation|attn_implementation|"
    r"layer_norm_type|initializer|_multiplier$|^embedding_multiplier|logits|softcap|sink|num_nextn|"
    r"bias_update|gate_bias|routing|capacity_factor|expert_capacity|aux|balance|jitter|drop|"
    r"moe_every_k|_stride$|state_size_proj_type|tie_encoder_decoder|chunk|num_loops|loop|renormalize|expert_group|scale_embedding|_act$|_act_fn$|norm_min|"
    r"ln_before_adapter|_policy$|max_num_|classifier_pooling|ignore_index|attn_every_n|stagger|"
    r"median_filter|classifier_proj_size")
# Mappings that are settings, not sub-configs (their keys are not looked into).
_SETTINGS = {"rope_scaling", "rope_parameters", "quantization_config", "id2label", "label2id", "auto_map",
             "task_specific_params", "generation_config", "attn_config", "ffn_config", "layer_types_config"}


@frozen
class Support:
    """How far the parameter count is modelled (see the module docstring for the levels)."""

    level: str
    guessed: tuple[str, ...] = ()
    reason: str = ""
    key: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"level": self.level, "guessed": list(self.guessed)}
        if self.level == UNSUPPORTED:
            out.update(reason=self.reason, key=self.key)
        return out

    @classmethod
    def from_json(cls, data: Any) -> Support | None:
        if not isinstance(data, Mapping) or data.get("level") not in LEVELS:
            return None
        guessed = data.get("guessed")
        reason, key = data.get("reason"), data.get("key")
        return cls(str(data["level"]), tuple(g for g in guessed if isinstance(g, str)) if isinstance(guessed, list)
                   else (), reason if isinstance(reason, str) else "", key if isinstance(key, str) else "")

    @classmethod
    def unsupported(cls, reason: str, key: str) -> Support:
        return cls(UNSUPPORTED, reason=reason, key=key)

    @property
    def line(self) -> str:
        """One line for people: the level and what is guessed, or why there is no number."""
        if self.level == UNSUPPORTED:
            return f"unsupported: {self.reason}" + (f" (key {self.key})" if self.key else "")
        if self.level == APPROXIMATE:
            return "approximate: " + "; ".join(self.guessed)
        return "modelled (expected within 1%)"


@lru_cache(maxsize=4096)
def _structural(key: str) -> bool:
    return _STRUCTURAL.search(key) and not _INERT.search(key)


_PLAIN = (str, int, float, list)  # JSON values that are never a mapping: no ABC check for them


def unread_structural_keys(config: Mapping[str, Any], reads: Mapping[str, Iterable[str]],
                           path: str = "") -> list[str]:
    """Config keys (dotted for nested ones) that could change the count and that no builder read
    (`reads`: {sub-config path: keys read}); a nested sub-config no builder opened counts as one key."""
    seen = reads.get(path, ())
    out: list[str] = []
    # Settings, private keys and unset (null) values are passed over; a read plain value is checked first
    # for what it is not (a mapping), then for being read, and no further.
    for key, value in config.items():
        if type(value) is dict or not (value is None or isinstance(value, _PLAIN)) and isinstance(value, Mapping):
            if key in _SETTINGS or key.startswith("_"):
                continue
            dotted = f"{path}.{key}" if path else key
            if key in seen:
                out += unread_structural_keys(value, reads, dotted)
            elif _looks_like_config(value):
                out.append(dotted)
        elif (key not in seen and value is not None and key not in _SETTINGS and not key.startswith("_")
              and _structural(key) and not (value is False or value == [] or value == 0)):
            out.append(f"{path}.{key}" if path else key)
    return out


def _looks_like_config(value: Mapping[str, Any]) -> bool:
    return any(k in value for k in ("model_type", "hidden_size", "d_model", "num_hidden_layers", "vocab_size"))


# Unread keys that, in a model whose architecture the builders only guessed, say the guess has the wrong shape:
# a count of layers beside the one read (Dory's n_input_layers), a count of experts beside the routed ones
# (zero or identity experts), or a width the model also works at (Perceiver's d_latents, NeoMME's factorised
# embedding_dim). Their part of the count has no bound, so such an estimate is no number.
_DEPTH = _Words(r"layers")  # a count of layers; "…_per_…" groupings and layer lists are not counts
_EXPERTS = re.compile(r"expert.*num|num.*expert|n_.*experts")
_WIDTH = _Words(r"^d_|_dim$|hidden_size$|_rank$|_channels$|^embedding_size$|feed_forward_size$")
_NOT_WIDTH = _Words(r"kernel|vocab|window|chunk|patch|image|batch|head_dim|position|bucket|rotary|rope")
_HIDDEN = ("hidden_size", "n_embd", "d_model", "n_embed", "model_dim", "dim", "embed_dim")


def _int_value(value: Any) -> int | None:
    return value if type(value) is int and value > 0 else None


def _unbounded(config: Mapping[str, Any], reads: Mapping[str, Iterable[str]], unread: list[str]
               ) -> tuple[str, str] | None:
    """The first unread top-level key that leaves a guessed architecture without a bound, with why."""
    seen = set(reads.get("", ()))
    widths = {v for k in seen if _WIDTH.search(k) and (v := _int_value(config.get(k))) is not None}
    # A part narrower than an eighth of the model (a low-rank gate, a per-head detail) stays a bounded guess;
    # with no width read at the top (a composite's model lives in its sub-configs) there is nothing to compare
    hidden = next((v for k in _HIDDEN if k in seen and (v := _int_value(config.get(k))) is not None), 0)
    for key in unread:
        value = _int_value(config.get(key)) if "." not in key else None
        if value is None:
            continue
        if _DEPTH.search(key) and "_per_" not in key:
            return key, f"{key} ({value}) counts layers the guessed layout does not build"
        if _EXPERTS.search(key):
            return key, f"{key} ({value}) counts experts the guessed layout does not route to"
        if hidden and _WIDTH.search(key) and not _NOT_WIDTH.search(key) and value not in widths \
                and 8 * value >= hidden:
            return key, f"{key} ({value}) is a width no builder models beside the ones it read"
    return None


def assess(config: Mapping[str, Any], reads: Mapping[str, Iterable[str]], guesses: Iterable[str]) -> Support:
    """`modelled` unless a builder guessed or a structural key went unread (then `approximate`);
    `unsupported` when a whole sub-config went unread, or when the architecture was guessed and an unread key
    counts layers or experts, or sizes a width, the guess does not have."""
    guessed = list(dict.fromkeys(guesses))
    unread = sorted(unread_structural_keys(config, reads))  # the same whatever the key order
    # A whole sub-config no builder opened is a tower left out of the count, not a detail guessed: the
    # estimate has no bound (Git's vision_config, Moshi's depth decoder: 38-65% low), so it is no number
    towers = [k for k in unread if "." not in k and isinstance(config.get(k), Mapping)]
    if towers:
        return Support.unsupported(f"the sub-config {towers[0]} describes a part no builder models "
                                   f"(its parameters would be left out)", towers[0])
    if guessed and (hit := _unbounded(config, reads, unread)) is not None:
        key, why = hit
        return Support.unsupported(f"{guessed[0].split(' (')[0]} guessed, and {why}", key)
    if unread:
        shown = ", ".join(unread[:6]) + (f" and {len(unread) - 6} more" if len(unread) > 6 else "")
        guessed.append(f"keys not modelled: {shown}")
    return Support(APPROXIMATE if guessed else MODELLED, tuple(guessed))
