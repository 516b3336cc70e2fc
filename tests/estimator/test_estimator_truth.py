"""Derived parameter counts against truth.tsv: golden models exactly, the whole table within 1%."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from hubwatch.estimator import analyze

CONFIGS = Path(__file__).parent.parent / "data" / "configs"


def _rows() -> list[dict[str, str]]:
    with open(CONFIGS / "truth.tsv", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _config(hf_id: str) -> dict[str, object]:
    return json.loads((CONFIGS / hf_id.replace("/", "__") / "config.json").read_text())


def _truth(row: dict[str, str]) -> int | None:
    value = row["params_arch_config_faithful"] or row["published_total"]
    return int(value) if value else None


GOLDEN = [
    "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.2-1B-Instruct", "Qwen/Qwen2.5-0.5B-Instruct",
    "alpindale/WizardLM-2-8x22B", "deepseek-ai/DeepSeek-R1", "openai/gpt-oss-20b", "tiiuae/falcon-180B-chat",
    "google/flan-t5-base", "facebook/bart-large-cnn", "google-bert/bert-base-uncased", "microsoft/deberta-v3-base",
    "openai/clip-vit-base-patch32", "google/medgemma-27b-it", "ibm-granite/granite-docling-258M",
    "LiquidAI/LFM2-1.2B", "microsoft/phi-2", "google/vit-base-patch16-224", "openai-community/gpt2",
]


@pytest.mark.parametrize("hf_id", GOLDEN)
def test_golden_exact(hf_id: str) -> None:
    row = next(r for r in _rows() if r["hf_id"] == hf_id)
    assert analyze(_config(hf_id)).params.derived == _truth(row)


def test_share_within_one_percent_meets_target() -> None:
    judged = [(r["hf_id"], _truth(r)) for r in _rows() if _truth(r)]
    assert len(judged) >= 35
    misses = []
    for hf_id, truth in judged:
        derived = analyze(_config(hf_id)).params.derived
        if abs(derived - truth) / truth > 0.01:  # type: ignore[operator]
            misses.append((hf_id, truth, derived))
    assert len(misses) <= 0.05 * len(judged), misses


def test_every_custom_code_config_with_published_total_within_one_percent() -> None:
    for row in _rows():
        cfg = _config(row["hf_id"])
        if "auto_map" in cfg and row["published_total"]:
            derived = analyze(cfg).params.derived
            assert abs(derived - int(row["published_total"])) / int(row["published_total"]) <= 0.01, row["hf_id"]


def test_jina_alibi_glu_bert_has_no_position_table_and_a_glu_mlp() -> None:
    a = analyze(_config("jinaai/jina-embeddings-v2-base-en"))
    assert a.custom_code
    assert not any("position_embeddings" in n.name for n in a.structure.nodes)
    assert any(n.type.startswith("mlp[glu") for n in a.structure.nodes)


def test_moe_active_params_are_fewer_than_total() -> None:
    a = analyze(_config("alpindale/WizardLM-2-8x22B"))
    assert 0.2 * a.params.derived < a.params.active < 0.35 * a.params.derived
    dense = analyze(_config("meta-llama/Llama-2-7b-hf"))
    assert dense.params.active == dense.params.derived


def test_components_add_up_and_towers_are_separate() -> None:
    a = analyze(_config("google/medgemma-27b-it"))
    assert sum(a.params.by_component.values()) == a.params.derived
    assert {"vision_tower", "projector", "embeddings", "attention", "feed_forward", "norms"} <= set(a.params.by_component)
    clip = analyze(_config("openai/clip-vit-base-patch32"))
    assert {"text_tower", "vision_tower", "projections"} <= set(clip.params.by_component)


def test_custom_code_families_are_counted_from_their_keys() -> None:
    # Published sizes of these custom-code checkpoints (model cards): Qwen-7B 7.72B, ChatGLM2-6B 6.24B,
    # Falcon-40B 41.3B, stable-code-3b 2.80B.
    expected = {"Qwen/Qwen-7B": 7.72e9, "THUDM/chatglm2-6b": 6.24e9, "tiiuae/falcon-40b": 41.3e9,
                "stabilityai/stable-code-3b": 2.80e9}
    for hf_id, size in expected.items():
        a = analyze(_config(hf_id))
        assert a.custom_code
        assert abs(a.params.derived - size) / size < 0.01, hf_id
