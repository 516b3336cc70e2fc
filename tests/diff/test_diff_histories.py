"""Replay every real history: per version, the kinds and severities match the reviewed golden
files, and the checks below tie the important versions to their HISTORY.tsv `what_changed`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diff_histories import GOLDEN, all_histories, golden_entries, load_version, replay
from hubwatch.domain.records import Kind, Severity
from hubwatch.diff import diff_snapshots

HISTORIES = all_histories()


def test_every_history_has_a_golden_file() -> None:
    assert len(HISTORIES) == 22
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == sorted(h.name for h in HISTORIES)


@pytest.mark.parametrize("history", HISTORIES, ids=lambda p: p.name)
def test_replay_matches_reviewed_golden(history: Path) -> None:
    expected = json.loads((GOLDEN / f"{history.name}.json").read_text(encoding="utf-8"))
    assert golden_entries(history) == expected, (
        f"{history.name} changed; review, then regenerate with tests/diff/regen_diff_golden.py"
    )


@pytest.mark.parametrize("history", HISTORIES, ids=lambda p: p.name)
def test_replay_record_shape(history: Path) -> None:
    for row, changes in replay(history):
        for change in changes:
            assert {"file", "key", "old", "new", "direction"} <= set(change.detail), change
            assert change.direction in ("hazard", "update")
            assert "\n" not in change.summary and change.summary
            assert change.path.startswith(change.detail["file"])
            json.dumps(change.detail)  # JSON-able
            if change.kind is Kind.METADATA or row["version"] == "v1":
                assert change.severity is Severity.INFO


def _found(history: str, version: str) -> set[tuple[str, str, str]]:
    rows = dict((row["version"], changes) for row, changes in replay(_path(history)))
    return {(c.kind.value, c.severity.value, c.path) for c in rows[version]}


def _path(name: str) -> Path:
    return next(h for h in HISTORIES if h.name == name)


# (history, version, expected (kind, severity, path) findings) read off `what_changed`.
EXPECTED = [
    ("FlagAlpha__Atom-7B", "v6", {("dtype", "medium", "config.json:torch_dtype"), ("metadata", "info", "config.json:_name_or_path")}),
    ("FlagAlpha__Atom-7B", "v7", {("metadata", "info", "generation_config.json:transformers_version")}),
    ("Qwen__Qwen-7B", "v3", {("context", "medium", "config.json:max_position_embeddings"),
                             ("context", "medium", "tokenizer_config.json:model_max_length")}),
    ("Qwen__Qwen-7B-Chat", "v4", {("context", "medium", "config.json:use_dynamic_ntk"), ("context", "medium", "config.json:use_logn_attn")}),
    ("THUDM__chatglm-6b", "v2", {("special_tokens", "high", "config.json:pad_token_id")}),
    ("THUDM__chatglm-6b", "v3", {("architecture", "high", "config.json:vocab_size"), ("special_tokens", "high", "config.json:eos_token_id")}),
    ("THUDM__chatglm-6b", "v4", {("special_tokens", "high", "tokenizer_config.json:eos_token")}),
    ("THUDM__chatglm3-6b", "v3", {("context", "medium", "config.json:seq_length")}),
    ("THUDM__codegeex2-6b", "v3", {("custom_code", "high", "config.json:auto_map.AutoModelForCausalLM")}),
    ("deepseek-ai__DeepSeek-R1", "v3", {("special_tokens", "high", "tokenizer_config.json:add_bos_token")}),
    ("deepseek-ai__DeepSeek-R1-Distill-Llama-8B", "v2", {("chat_template", "high", "chat_template.jinja")}),
    ("google__gemma-2b-it", "v2", {("chat_template", "high", "tokenizer_config.json:chat_template")}),
    ("google__gemma-4-31B-it", "v2", {("chat_template", "high", "chat_template.jinja")}),
    ("ibm-granite__granite-3.1-1b-a400m-instruct", "v3", {("dtype", "medium", "config.json:torch_dtype"),
                                                         ("weights", "low", "model.safetensors.index.json:shards")}),
    ("mattshumer__Reflection-Llama-3.1-70B", "v4", {("weights", "medium", "model.safetensors.index.json:metadata.total_size")}),
    ("mattshumer__Reflection-Llama-3.1-70B", "v5", {("context", "medium", "config.json:max_position_embeddings"),
                                                   ("context", "medium", "config.json:rope_scaling"),
                                                   ("special_tokens", "high", "config.json:eos_token_id"),
                                                   ("architecture", "high", "config.json:vocab_size")}),
    ("mattshumer__Reflection-Llama-3.1-70B", "v6", {("special_tokens", "high", "generation_config.json:eos_token_id"),
                                                   ("generation_defaults", "low", "generation_config.json:temperature")}),
    ("meta-llama__Llama-3.2-3B-Instruct", "v2", {("context", "medium", "config.json:rope_scaling.factor")}),
    ("meta-llama__Llama-3.2-3B-Instruct", "v4", {("chat_template", "high", "tokenizer_config.json:chat_template")}),
    ("microsoft__phi-1_5", "v4", {("dtype", "medium", "config.json:torch_dtype")}),
    ("mistralai__Mixtral-8x7B-v0.1", "v2", {("architecture", "high", "config.json:model_type"), ("context", "medium", "config.json:sliding_window")}),
    ("mistralai__Mixtral-8x7B-v0.1", "v7", {("context", "medium", "config.json:sliding_window")}),
    ("openai__gpt-oss-20b", "v4", {("chat_template", "high", "chat_template.jinja")}),
    ("openai__gpt-oss-20b", "v5", {("chat_template", "high", "chat_template.jinja")}),
    ("tiiuae__falcon-7b", "v2", {("custom_code", "high", "config.json:auto_map"), ("architecture", "high", "config.json:model_type")}),
    ("tiiuae__falcon-7b-instruct", "v3", {("special_tokens", "high", "config.json:bos_token_id"), ("special_tokens", "high", "config.json:eos_token_id")}),
    ("tiiuae__falcon-7b-instruct", "v4", {("architecture", "high", "config.json:model_type"), ("custom_code", "medium", "config.json:auto_map.AutoModelForCausalLM")}),
    ("meta-llama__Llama-2-7b-hf", "v5", {("special_tokens", "high", "generation_config.json:pad_token_id")}),
    ("meta-llama__Llama-2-7b-hf", "v6", {("context", "medium", "config.json:max_position_embeddings")}),
    ("meta-llama__Llama-2-7b-hf", "v12", {("generation_defaults", "low", "generation_config.json:temperature"),
                                         ("generation_defaults", "low", "generation_config.json:top_p")}),
]  # fmt: skip


@pytest.mark.parametrize(("history", "version", "expected"), EXPECTED, ids=[f"{h}-{v}" for h, v, _ in EXPECTED])
def test_what_changed_is_found(history: str, version: str, expected: set[tuple[str, str, str]]) -> None:
    assert expected <= _found(history, version)


@pytest.mark.parametrize(
    ("history", "version"),
    [("Qwen__Qwen-7B", "v2"), ("meta-llama__Llama-3.2-3B-Instruct", "v3"),
     ("mattshumer__Reflection-Llama-3.1-70B", "v7"), ("openai__gpt-oss-20b", "v3"),
     ("THUDM__chatglm3-6b", "v2"), ("FlagAlpha__Atom-7B", "v7")],
)  # fmt: skip
def test_no_semantic_change(history: str, version: str) -> None:
    """Re-saves, representation changes and shadowed copies: at most info."""
    assert {severity for _, severity, _ in _found(history, version)} <= {"info"}


def test_special_token_string_vs_added_token_is_not_a_special_token_change() -> None:
    found = _found("meta-llama__Llama-3.2-3B-Instruct", "v3")
    assert not any(kind == "special_tokens" for kind, _, _ in found)


def test_summaries_a_person_acts_on() -> None:
    rows = {row["version"]: changes for row, changes in replay(_path("meta-llama__Llama-2-7b-hf"))}
    assert "max_position_embeddings 2048 → 4096" in [c.summary for c in rows["v6"]]
    assert "temperature 0.9 → 0.6" in [c.summary for c in rows["v12"]]
    reflection = {row["version"]: changes for row, changes in replay(_path("mattshumer__Reflection-Llama-3.1-70B"))}
    eos = next(c for c in reflection["v6"] if c.path == "generation_config.json:eos_token_id")
    assert eos.summary == "eos_token_id [128001, 128008, 128009] → [128001, 128009]"
    assert eos.direction == "update"  # one of several eos ids dropped: upstream's change, no hazard (issue 9)
    assert eos.detail["old"] == [128001, 128008, 128009] and eos.detail["new"] == [128001, 128009]


def test_revert_is_visible_in_detail() -> None:
    rows = {row["version"]: changes for row, changes in replay(_path("deepseek-ai__DeepSeek-R1"))}
    (v3,), (v4,) = rows["v3"], rows["v4"]
    assert (v3.detail["old"], v3.detail["new"]) == (v4.detail["new"], v4.detail["old"])
    assert (v3.direction, v4.direction) == ("hazard", "update")


def test_rendered_diff_shows_the_prompt_change() -> None:
    rows = {row["version"]: changes for row, changes in replay(_path("deepseek-ai__DeepSeek-R1-Distill-Llama-8B"))}
    (change,) = rows["v2"]
    rendered = change.detail["rendered_diff"]
    added = [line for line in rendered["system_user"]["diff"].splitlines() if line.startswith("+")]
    assert any(line.endswith("<｜Assistant｜><think>") for line in added)
    assert change.detail["text_diff"].startswith("--- old/chat_template.jinja")


@pytest.mark.parametrize("history", HISTORIES, ids=lambda p: p.name)
def test_a_version_against_itself_is_empty(history: Path) -> None:
    for folder in sorted(p for p in history.iterdir() if p.is_dir()):
        snapshot = load_version(folder)
        assert diff_snapshots(snapshot, snapshot) == []
