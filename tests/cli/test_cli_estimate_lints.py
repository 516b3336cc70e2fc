"""Lints on real repos: every config and history folder read the way `hubwatch estimate FOLDER` reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubwatch.cli.estimate_inputs import load_target
from hubwatch.estimator import analyze
from hubwatch.hubsim import demo_root


def _findings(folder: Path) -> dict[str, str]:
    inputs = load_target(str(folder), revision=None, hub=None)
    analysis = analyze(inputs.config, manifest=inputs.manifest, tokenizer_config=inputs.tokenizer_config,
                       generation_config=inputs.generation_config)
    return {f.rule: f.level for f in analysis.findings}


def _real_folders(data_dir: Path) -> list[Path]:
    configs = [p for p in (data_dir / "configs").iterdir() if (p / "config.json").is_file()]
    versions = [v for root in (data_dir / "histories", demo_root()) for repo in root.iterdir() if repo.is_dir()
                for v in repo.iterdir() if (v / "config.json").is_file()]
    return sorted(configs) + sorted(versions)


@pytest.fixture(scope="module")
def real(data_dir: Path) -> dict[str, dict[str, str]]:
    return {f"{p.parent.name}/{p.name}": _findings(p) for p in _real_folders(data_dir)}


def test_at_least_ten_rules_fire_on_real_repos(real: dict[str, dict[str, str]]) -> None:
    fired = {rule for found in real.values() for rule in found}
    assert len(real) > 120
    assert len(fired) >= 10, sorted(fired)


@pytest.mark.parametrize(
    ("folder", "rule", "fires"),
    [
        # Reflection-70B shipped a tokenizer with ids past vocab_size (v1–v4) and resized it in v5
        ("mattshumer__Reflection-Llama-3.1-70B/v1", "vocab-smaller-than-tokenizer", True),
        ("mattshumer__Reflection-Llama-3.1-70B/v5", "vocab-smaller-than-tokenizer", False),
        ("mattshumer__Reflection-Llama-3.1-70B/v5", "float32-large-model", True),
        # falcon-7b-instruct: eos 11 in config but 1/2 in generation_config (v3, and the v5 revert)
        ("tiiuae__falcon-7b-instruct/v3", "eos-mismatch", True),
        ("tiiuae__falcon-7b-instruct/v4", "eos-mismatch", False),
        ("tiiuae__falcon-7b-instruct/v5", "eos-mismatch", True),
        # phi-1.5: a generation_config "from the model config", whose config has no eos either
        ("microsoft__phi-1_5/v1", "eos-missing-from-generation-config", True),
        # Llama-2: max_length added to config.json in v4, removed again in v7
        ("meta-llama__Llama-2-7b-hf/v4", "generation-params-in-config", True),
        ("meta-llama__Llama-2-7b-hf/v7", "generation-params-in-config", False),
        # Llama-2 v1 names pad <unk> in special_tokens_map.json only; v11 has no pad token anywhere
        ("meta-llama__Llama-2-7b-hf/v1", "pad-token-missing", False),
        ("meta-llama__Llama-2-7b-hf/v11", "pad-token-missing", True),
        ("google__gemma-2b-it/v2", "pad-token-missing", False),  # gemma's has one
        ("THUDM__chatglm3-6b/v3", "pad-token-missing", False),  # a repo tokenizer class defines it in code
        # Llama 3.1 ships rope_scaling llama3 factor 8 over 8192 for 131072 positions: not an error
        ("configs/meta-llama__Llama-3.1-8B-Instruct", "rope-scaling-inconsistent", False),
        ("configs/google__medgemma-27b-it", "deep-stack-without-depth-scaled-init", True),  # 62 text layers
        ("configs/facebook__bart-large-cnn", "generation-params-in-config", True),
        ("configs/tiiuae__falcon-7b", "custom-code-required", True),
    ],
)
def test_known_findings_of_real_repos(real: dict[str, dict[str, str]], folder: str, rule: str, fires: bool) -> None:
    assert (rule in real[folder]) is fires, real[folder]


def test_no_error_level_noise_on_healthy_repos(real: dict[str, dict[str, str]]) -> None:
    errors = {folder: rule for folder, found in real.items() for rule, level in found.items() if level == "error"}
    assert set(errors.values()) <= {"vocab-smaller-than-tokenizer"}, errors
    assert all(folder.startswith("mattshumer__Reflection") for folder in errors), errors
