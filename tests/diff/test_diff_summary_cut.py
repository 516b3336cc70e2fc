"""One-line summaries cut a long value only between values (never inside a number, key or string
member), and count nouns right ("1 tensor", "2 tensors")."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hubwatch.diff.changes import counted, show

_scalars = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False, width=32),
                     st.text(st.characters(codec="ascii", categories=("L", "N")), max_size=30), st.booleans())
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=6)
                       | st.dictionaries(st.text(st.characters(codec="ascii", categories=("L",)), min_size=1, max_size=12),
                                         inner, max_size=6), max_leaves=20)


def _within(shown: Any, value: Any) -> bool:
    """`shown` is `value` with whole members dropped (objects: some keys; arrays: a prefix)."""
    if isinstance(value, dict):
        return isinstance(shown, dict) and all(k in value and _within(v, value[k]) for k, v in shown.items())
    if isinstance(value, list):
        return isinstance(shown, list) and len(shown) <= len(value) and all(map(_within, shown, value))
    return bool(shown == value)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(st.characters(codec="ascii", categories=("L",)), min_size=1, max_size=12), _values,
                       min_size=1, max_size=8))
def test_a_container_is_cut_between_members_only(value: dict[str, Any]) -> None:
    text = show(value)
    assert len(text) <= 80
    # drop the "…" marks: what is left parses, and every number, key and string in it is whole
    shown = json.loads(text.replace(", …", "").replace("…", ""))
    assert _within(shown, value), text


def test_the_issue_examples() -> None:
    rope = {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
            "original_max_position_embeddings": 8192, "rope_type": "llama3"}
    assert show(rope) == '{"factor": 8.0, "high_freq_factor": 4.0, …}'
    assert show({"type": "sinusoidal", "factor": 2}) == '{"factor": 2, "type": "sinusoidal"}'  # short: in full
    auto_map = {"AutoTokenizer": ["tokenization_chatglm.ChatGLMTokenizer", None], "AutoConfig": "c.C"}
    assert "tokenization_chat…" not in show(auto_map)
    long_text = "a long model card sentence " * 5
    assert show(long_text) == '"a long model card sentence a long model…" (135 characters)'
    assert show(list(range(40))).endswith(", …]")


def test_counted_nouns() -> None:
    assert [counted(n, "tensor") for n in (0, 1, 2)] == ["0 tensors", "1 tensor", "2 tensors"]
    assert counted(1, "advisory", "advisories") == "1 advisory" and counted(3, "advisory", "advisories") == "3 advisories"
