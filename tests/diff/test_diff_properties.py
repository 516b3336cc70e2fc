"""Properties: diff(a, a) is empty; re-serialising (key order, whitespace, number format) is no change."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from diff_histories import make_snapshot
from hubwatch.diff import diff_snapshots, diff_text

KEYS = st.sampled_from(
    ["model_type", "hidden_size", "eos_token_id", "bos_token", "rope_scaling", "factor", "auto_map",
     "torch_dtype", "temperature", "chat_format", "x", "y", "transformers_version", "additional_special_tokens"]
)  # fmt: skip
SCALARS = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
JSON: st.SearchStrategy[Any] = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5), max_leaves=20
)
DOCS = st.dictionaries(KEYS, JSON, max_size=8)
FILES = ("config.json", "generation_config.json", "tokenizer_config.json", "special_tokens_map.json")


def reserialise(value: Any, rng: random.Random) -> Any:
    """The same value with dict keys shuffled and integral floats written as ints."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: reserialise(v, rng) for k, v in items}
    if isinstance(value, list):
        return [reserialise(v, rng) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


@settings(max_examples=60, deadline=None)
@given(docs=st.fixed_dictionaries({f: DOCS for f in FILES}))
def test_diff_of_a_snapshot_with_itself_is_empty(docs: dict[str, Any]) -> None:
    snapshot = make_snapshot(docs)
    assert diff_snapshots(snapshot, snapshot) == []


@settings(max_examples=60, deadline=None)
@given(docs=st.fixed_dictionaries({f: DOCS for f in FILES}), seed=st.integers(0, 2**32 - 1), indent=st.sampled_from([None, 1, 2, 4]))
def test_reserialisation_is_no_change(docs: dict[str, Any], seed: int, indent: int | None) -> None:
    rng = random.Random(seed)
    again = {f: json.dumps(reserialise(d, rng), indent=indent, ensure_ascii=bool(seed % 2)) + "\n" * (seed % 3)
             for f, d in docs.items()}  # fmt: skip
    assert diff_snapshots(make_snapshot(docs), make_snapshot(again)) == []


@settings(max_examples=40, deadline=None)
@given(doc=DOCS, key=KEYS, value=SCALARS)
def test_a_real_change_is_reported(doc: dict[str, Any], key: str, value: Any) -> None:
    changed = {**doc, key: value}
    changes = diff_snapshots(make_snapshot({"config.json": doc}), make_snapshot({"config.json": changed}))
    same = key in doc and json.dumps(doc[key]) == json.dumps(value)
    numerically_same = key in doc and isinstance(doc[key], (int, float)) and not isinstance(doc[key], bool) \
        and isinstance(value, (int, float)) and not isinstance(value, bool) and doc[key] == value
    if same or numerically_same:
        assert changes == []
    else:
        assert changes and all(c.detail["file"] == "config.json" for c in changes)
        assert all(len(c.summary.splitlines()) == 1 for c in changes)  # one line, whatever the value


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=200))
def test_diff_text_of_equal_texts_is_empty(text: str) -> None:
    assert diff_text(text, text) == ""
    if text:
        assert diff_text(text, text + "x") != ""


def test_true_is_not_one() -> None:
    old, new = make_snapshot({"config.json": {"use_cache": 1}}), make_snapshot({"config.json": {"use_cache": True}})
    (change,) = diff_snapshots(old, new)
    assert change.summary == "use_cache 1 → true"
