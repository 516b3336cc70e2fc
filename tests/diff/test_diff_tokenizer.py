"""Tokenizer files, special tokens and JSON config semantics."""

from __future__ import annotations

import json

import pytest

from diff_histories import make_snapshot
from hubwatch.domain.records import Kind, Severity
from hubwatch.diff import diff_snapshots


def test_eos_becomes_a_list_is_a_special_token_fix() -> None:
    old = make_snapshot({"generation_config.json": {"eos_token_id": 128001, "temperature": 0.6}})
    new = make_snapshot({"generation_config.json": {"eos_token_id": [128001, 128009], "temperature": 0.6}})
    (change,) = diff_snapshots(old, new)
    assert (change.kind, change.severity, change.direction) == (Kind.SPECIAL_TOKENS, Severity.HIGH, "update")
    assert change.summary == "eos_token_id 128001 → [128001, 128009]"
    assert change.path == "generation_config.json:eos_token_id"
    assert change.detail == {"file": "generation_config.json", "key": "eos_token_id", "old": 128001,
                             "new": [128001, 128009], "direction": "update", "op": "changed"}  # fmt: skip


def test_formatting_never_counts() -> None:
    doc = {"b": 1e-05, "a": [1, 2], "c": {"z": 1.0}}
    old = make_snapshot({"config.json": json.dumps(doc)})
    new = make_snapshot({"config.json": '{\n "c": {"z": 1}, "a": [1,2],\n  "b": 0.00001 }\n'})
    assert diff_snapshots(old, new) == []


def test_invalid_json_is_a_finding() -> None:
    old = make_snapshot({"config.json": {"model_type": "llama"}})
    new = make_snapshot({"config.json": '{"model_type": '})
    (change,) = diff_snapshots(old, new)
    assert change.severity is Severity.HIGH and "not valid JSON" in change.summary


def test_added_token_flags_vs_content() -> None:
    tok = lambda content, normalized: {"__type": "AddedToken", "content": content, "lstrip": False,  # noqa: E731
                                       "normalized": normalized, "rstrip": False, "single_word": False}  # fmt: skip
    base = make_snapshot({"tokenizer_config.json": {"bos_token": "<s>"}})
    as_dict = make_snapshot({"tokenizer_config.json": {"bos_token": tok("<s>", True)}})
    flags = make_snapshot({"tokenizer_config.json": {"bos_token": tok("<s>", False)}})
    content = make_snapshot({"tokenizer_config.json": {"bos_token": tok("<|begin|>", False)}})
    (rep,) = diff_snapshots(base, as_dict)
    assert rep.kind is Kind.METADATA
    (flag,) = diff_snapshots(as_dict, flags)
    assert (flag.kind, flag.severity) == (Kind.TOKENIZER, Severity.MEDIUM)
    (changed,) = diff_snapshots(flags, content)
    assert (changed.kind, changed.summary) == (Kind.SPECIAL_TOKENS, "bos_token <s> → <|begin|>")


def test_removed_pad_token_is_an_update_and_a_removed_eos_token_a_hazard() -> None:
    old = make_snapshot({"special_tokens_map.json": {"eos_token": "</s>", "pad_token": "<unk>"}})
    new = make_snapshot({"special_tokens_map.json": {"eos_token": "</s>"}})
    (change,) = diff_snapshots(old, new)
    assert (change.kind, change.direction, change.summary) == (Kind.SPECIAL_TOKENS, "update", "pad_token removed (was <unk>)")
    (gone,) = diff_snapshots(old, make_snapshot({"special_tokens_map.json": {"pad_token": "<unk>"}}))
    assert (gone.direction, gone.detail["hazards"]) == ("hazard", ["token:special_tokens_map.json:eos_token"])
    (back,) = diff_snapshots(make_snapshot({"special_tokens_map.json": {"pad_token": "<unk>"}}), old)
    assert (back.direction, back.detail["clears"]) == ("update", ["token:special_tokens_map.json:eos_token"])


def tokenizer_json(vocab: int = 5, normalizer: object = None, added: tuple[str, ...] = ("<s>",)) -> dict[str, object]:
    return {
        "version": "1.0",
        "model": {"type": "BPE", "vocab": {f"t{i}": i for i in range(vocab)}, "merges": ["t t"]},
        "added_tokens": [{"id": 100 + i, "content": c, "special": True, "lstrip": False, "rstrip": False,
                          "normalized": False, "single_word": False} for i, c in enumerate(added)],  # fmt: skip
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "ByteLevel"},
        "post_processor": {"type": "TemplateProcessing", "single": ["<s>", "$A"]},
        "decoder": None,
    }


def test_tokenizer_json_salient_parts_only() -> None:
    old = make_snapshot({"tokenizer.json": tokenizer_json()})
    new = make_snapshot({"tokenizer.json": tokenizer_json(vocab=50_000, normalizer={"type": "NFC"}, added=("<s>", "<x>"))})
    changes = diff_snapshots(old, new)
    found = {(c.kind.value, c.severity.value, c.summary) for c in changes}
    assert ("tokenizer", "high", "vocabulary changed: 5 → 50000 entries") in found
    assert ("tokenizer", "high", "normalizer changed: normalizer null → {\"type\": \"NFC\"}") in found
    assert ("tokenizer", "medium", "1 added token defined: 101 <x>") in found
    assert all(len(json.dumps(c.detail)) < 5_000 for c in changes)  # never the whole vocabulary
    post = tokenizer_json()
    post["post_processor"] = {"type": "TemplateProcessing", "single": ["$A"]}
    (bos,) = diff_snapshots(old, make_snapshot({"tokenizer.json": post}))
    assert (bos.kind, bos.severity) == (Kind.SPECIAL_TOKENS, Severity.HIGH)


@pytest.mark.parametrize("pairs", [False, True])
def test_tokenizer_json_vocabulary_and_merges_changes_are_found_however_small(pairs: bool) -> None:
    """Only the parts that changed are reported, the vocabulary and merges by digest: an id written as
    true or 1.0 for 1 is a change (equal in Python, not in the file), the same values are not."""
    def doc(vocab: dict[str, object], merges: list[object], special: str = "<s>") -> dict[str, object]:
        base = tokenizer_json(added=(special,))
        base["model"] = {"type": "BPE", "vocab": vocab, "merges": merges}
        return base

    vocab: dict[str, object] = {f"t{i}": i for i in range(300)}
    merges: list[object] = [["t1", "t2"], ["t3", "t4"]] if pairs else ["t1 t2", "t3 t4"]
    old = make_snapshot({"tokenizer.json": doc(vocab, merges)})

    def summaries(new_doc: dict[str, object]) -> set[str]:
        return {c.summary for c in diff_snapshots(old, make_snapshot({"tokenizer.json": new_doc}))}

    # the same vocabulary and merges, in another key order: only the added token is reported
    assert summaries(doc(dict(reversed(list(vocab.items()))), list(merges), special="<x>")) == {
        "1 added token changed content: 100 <s> → <x>"}
    for changed in (1.0, True, 7):
        assert "vocabulary changed: 300 → 300 entries" in summaries(doc({**vocab, "t1": changed}, merges))
    reordered = list(reversed(merges))
    assert any(s.startswith("merges changed") for s in summaries(doc(vocab, reordered)))
    if pairs:  # a pair's part written as true for 1: equal in Python, not in the file
        with_one = make_snapshot({"tokenizer.json": doc(vocab, [["t1", "t2"], ["t3", 1]])})
        with_true = make_snapshot({"tokenizer.json": doc(vocab, [["t1", "t2"], ["t3", True]])})
        assert any(c.summary.startswith("merges changed") for c in diff_snapshots(with_one, with_true))
    assert not any("vocabulary" in s or "merges" in s for s in summaries(doc(dict(vocab), list(merges))))


def test_first_revision_is_described_at_info() -> None:
    new = make_snapshot({"config.json": {"model_type": "llama", "auto_map": {"AutoModel": "m.M"}}},
                        listed={"pytorch_model.bin": "a" * 64})  # fmt: skip
    changes = diff_snapshots(None, new)
    assert changes and all(c.severity is Severity.INFO and c.detail["initial"] for c in changes)
    assert {c.kind for c in changes} >= {Kind.PICKLE, Kind.CUSTOM_CODE, Kind.ARCHITECTURE}
    assert next(c for c in changes if c.kind is Kind.PICKLE).detail["severity_if_changed"] == "high"
