"""One vocabulary: the diff's architecture and context keys are the estimator's concept spellings."""

from __future__ import annotations

from typing import Any

import pytest

from diff_histories import make_snapshot
from hubwatch.diff import classify, diff_snapshots
from hubwatch.domain.records import ChangeRecord, Kind, Severity
from hubwatch.estimator.config import ALIASES, CONCEPT_ROLES, architecture_keys

KIND_OF_ROLE = {"structure": Kind.ARCHITECTURE, "context": Kind.CONTEXT, "numerics": Kind.CONFIG}
SPELLINGS = [(concept, key) for concept, keys in ALIASES.items() for key in keys]


def one(old: dict[str, Any], new: dict[str, Any], file: str = "config.json") -> ChangeRecord:
    changes = diff_snapshots(make_snapshot({file: old}), make_snapshot({file: new}))
    assert len(changes) == 1, [c.summary for c in changes]
    return changes[0]


def changed(key: str, *, under: str | None = None) -> ChangeRecord:
    """`key` 8 → 16 in a MoE config.json, at the root or in the sub-object `under`."""

    def doc(value: int) -> dict[str, Any]:
        inner = {"moe_num_experts": 4, key: value}  # an expert count beside it, as in every MoE config
        return {"model_type": "m", **({under: inner} if under else inner)}

    return one(doc(8), doc(16))


@pytest.mark.parametrize("under", [None, "ffn_config", "attn_config"])
@pytest.mark.parametrize(("concept", "key"), SPELLINGS, ids=[f"{c}:{k}" for c, k in SPELLINGS])
def test_every_spelling_of_a_concept_has_its_kind_and_severity(concept: str, key: str, under: str | None) -> None:
    canonical = changed(ALIASES[concept][0], under=under)
    change = changed(key, under=under)
    assert (change.kind, change.severity) == (canonical.kind, canonical.severity), (concept, key)
    assert change.kind is KIND_OF_ROLE[CONCEPT_ROLES[concept]]
    if CONCEPT_ROLES[concept] == "structure":
        assert change.severity is Severity.HIGH


def test_dbrx_nested_expert_and_kv_head_counts_are_architecture() -> None:
    dbrx: dict[str, Any] = {
        "model_type": "dbrx", "d_model": 6144, "n_heads": 48, "n_layers": 40, "max_seq_len": 32768,
        "vocab_size": 100352,
        "attn_config": {"clip_qkv": 8, "kv_n_heads": 8, "rope_theta": 500000},
        "ffn_config": {"ffn_hidden_size": 10752, "moe_jitter_eps": 0.01, "moe_loss_weight": 0.05,
                       "moe_num_experts": 8, "moe_top_k": 4},
    }  # fmt: skip
    more_experts = {**dbrx, "ffn_config": {**dbrx["ffn_config"], "moe_num_experts": 16}}
    change = one(dbrx, more_experts)
    assert (change.kind, change.severity, change.path) == (
        Kind.ARCHITECTURE, Severity.HIGH, "config.json:ffn_config.moe_num_experts")
    assert change.summary == "ffn_config.moe_num_experts 8 → 16"
    fewer_kv_heads = {**dbrx, "attn_config": {**dbrx["attn_config"], "kv_n_heads": 4}}
    change = one(dbrx, fewer_kv_heads)
    assert (change.kind, change.severity) == (Kind.ARCHITECTURE, Severity.HIGH)
    # the same change spelled as Mixtral does
    mixtral = {"model_type": "mixtral", "num_local_experts": 8}
    change = one(mixtral, {**mixtral, "num_local_experts": 16})
    assert (change.kind, change.severity) == (Kind.ARCHITECTURE, Severity.HIGH)


def test_top_k_is_experts_per_token_only_beside_an_expert_count() -> None:
    dense = {"model_type": "llama", "hidden_size": 64, "top_k": 50}  # transformers' old generation default
    change = one(dense, {**dense, "top_k": 40})
    assert (change.kind, change.severity) == (Kind.GENERATION_DEFAULTS, Severity.LOW)
    moe = {"model_type": "m", "num_experts": 8, "top_k": 2}
    change = one(moe, {**moe, "top_k": 4})
    assert (change.kind, change.severity) == (Kind.ARCHITECTURE, Severity.HIGH)
    change = one({"top_k": 50}, {"top_k": 10}, file="generation_config.json")
    assert change.kind is Kind.GENERATION_DEFAULTS


def test_a_processor_size_is_not_a_model_size() -> None:
    old = {"size": {"width": 224, "height": 224}, "image_mean": [0.5, 0.5, 0.5]}
    change = one(old, {**old, "size": {"width": 336, "height": 224}}, file="preprocessor_config.json")
    assert change.kind is not Kind.ARCHITECTURE


def test_the_diff_lists_only_what_no_concept_names() -> None:
    spellings = {key for keys in ALIASES.values() for key in keys}
    assert classify.ARCHITECTURE_KEYS >= architecture_keys()
    own = (classify.ARCHITECTURE_KEYS - classify.CONCEPT_ARCHITECTURE_KEYS) | (
        classify.CONTEXT_KEYS - classify.CONCEPT_CONTEXT_KEYS
    )
    assert own.isdisjoint(spellings)
    assert set(CONCEPT_ROLES) == set(ALIASES) and set(CONCEPT_ROLES.values()) <= set(KIND_OF_ROLE)
