"""The diff engine's fast paths change nothing it finds: key-by-key JSON diffs give deepdiff's whole-
document paths, each JSON file is parsed once per diff, and unchanged templates and weight manifests
are neither parsed nor rendered."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hubwatch.diff import diff_snapshots, jsondiff, templates, weights
from hubwatch.domain import parsed_json as parsed
from hubwatch.diff.jsondiff import MISSING, KeyChange, key_changes, lookup
from hubwatch.domain.records import FileRecord
from hubwatch.domain.remote_data import load_remote_json
from hubwatch.domain.snapshot import Snapshot

KEYS = st.sampled_from(["a", "b", "c", "rope_scaling", "factor", "eos_token_id", "added_tokens_decoder", "1"])
SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([1.0, 2.5, float("nan")]) | st.text(max_size=3)
JSON: st.SearchStrategy[Any] = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=16
)


def whole_document(old: Any, new: Any) -> list[KeyChange]:
    """key_changes as it was: one deepdiff of the two whole documents."""
    if isinstance(old, dict) and isinstance(new, dict) and (not old or not new):
        return [KeyChange((k,), old.get(k, MISSING), new.get(k, MISSING)) for k in sorted(set(old) | set(new))]
    out = []
    for path in sorted(jsondiff._deepdiff_paths(old, new)):
        before, after = lookup(old, path), lookup(new, path)
        if before is not MISSING and after is not MISSING and jsondiff._same_deep(before, after):
            continue
        out.append(KeyChange(path, before, after))
    return out


def _same(a: list[KeyChange], b: list[KeyChange]) -> bool:
    return [c.path for c in a] == [c.path for c in b] and all(
        jsondiff._same_deep(x.old, y.old) and jsondiff._same_deep(x.new, y.new) for x, y in zip(a, b)
    )


@settings(max_examples=300, deadline=None)
@given(JSON, JSON)
def test_key_by_key_paths_are_deepdiffs_whole_document_paths(old: Any, new: Any) -> None:
    assert _same(key_changes(old, new), whole_document(old, new))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"a": {"x": 1, "y": [1, 2]}, "b": True}, {"a": {"x": 1.0, "y": [1, 3]}, "b": 1}),
        ({"a": {}}, {"a": {"x": 1}}),
        ({"a": {"x": 1}}, {"a": [1]}),
        ({1: "yaml", "a": 1}, {1: "yml", "a": 2}),  # a key that is not a string: left whole to deepdiff
        ({"a": {2: {"b": 1}}}, {"a": {2: {"b": 2}}}),
        ({"a": float("nan")}, {"a": float("nan")}),
    ],
)
def test_key_by_key_edge_cases(old: Any, new: Any) -> None:
    assert _same(key_changes(old, new), whole_document(old, new))


def test_parse_once_parses_each_content_once_and_only_inside_the_block(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bytes] = []

    def counting(raw: bytes, **options: Any) -> Any:
        calls.append(raw)
        return load_remote_json(raw, **options)

    monkeypatch.setattr(parsed, "load_remote_json", counting)
    raw = json.dumps({"a": [1, 2]}).encode()
    with parsed.parse_once():
        with parsed.parse_once():  # nested: the same memo
            first = parsed.remote_json(raw)
        assert parsed.remote_json(bytes(bytearray(raw))) is first  # byte-equal content shares the parse
        assert parsed.remote_json(raw, reject_constants=True, max_values=100) is first  # limits that cannot bite
        parsed.remote_json(b"[NaN]")
        with pytest.raises(ValueError):
            parsed.remote_json(b"[NaN]", reject_constants=True)  # limits that bite: parsed under them
        with pytest.raises(ValueError) as caught:
            parsed.remote_json(b"{not json")
        with pytest.raises(ValueError) as again:
            parsed.remote_json(b"{not json")
        assert str(caught.value) == str(again.value)
    assert len(calls) == 4  # {"a": …}, [NaN] twice (plain and refusing constants), the broken file once
    parsed.remote_json(raw)  # outside: parsed afresh
    assert len(calls) == 5


@pytest.mark.parametrize("raw", [b'{"a": 1}', b'{"a": "NaN"}', b"[NaN, 1]", b"[Infinity]", b"[1, 2, 3, 4]",
                                 b"[" * 70 + b"]" * 70, b"{oops", b"\xff"])  # fmt: skip
@pytest.mark.parametrize(("reject", "cap"), [(False, None), (True, None), (True, 3), (False, 2), (False, 100)])
def test_the_memo_gives_what_a_parse_under_the_same_limits_gives(raw: bytes, reject: bool, cap: int | None) -> None:
    def outcome(parse: Any) -> Any:
        try:
            return ("value", json.dumps(parse(raw, reject_constants=reject, max_values=cap)))
        except ValueError as exc:
            return (type(exc).__name__, str(exc))

    with parsed.parse_once():
        first = outcome(lambda r, **_: parsed.remote_json(r))  # the plain parse first, as the templates read it
        assert first == outcome(lambda r, **_: load_remote_json(r))
        assert outcome(parsed.remote_json) == outcome(load_remote_json)


def test_no_memo_for_files_over_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parsed, "MAX_MEMO_BYTES", 8)
    raw = json.dumps({"long": "x" * 20}).encode()
    with parsed.parse_once():
        assert parsed.remote_json(raw) is not parsed.remote_json(raw)


def _snapshot(sha: str, contents: dict[str, bytes]) -> Snapshot:
    return Snapshot(sha, {p: FileRecord(p, len(b)) for p, b in contents.items()}, contents)


def test_unchanged_templates_and_weights_are_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    template = {"chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}", "bos_token": "<s>"}
    index = {"metadata": {"total_size": 10}, "weight_map": {"w": "model-00001.safetensors"}}
    old = _snapshot("a", {"tokenizer_config.json": json.dumps(template).encode(),
                          "model.safetensors.index.json": json.dumps(index).encode(),
                          "config.json": b'{"hidden_size": 8}'})  # fmt: skip
    new = _snapshot("b", {**old.contents, "config.json": b'{"hidden_size": 16}'})

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("an unchanged file was parsed or rendered")

    monkeypatch.setattr(templates, "remote_json", refuse)
    monkeypatch.setattr(templates, "render_many", refuse)
    monkeypatch.setattr(weights, "remote_json", refuse)
    changes = diff_snapshots(old, new)
    assert [c.detail.get("key") for c in changes] == ["hidden_size"]
    assert templates.diff_templates(old, new) == [] and weights.diff_weights(old, new) == []
