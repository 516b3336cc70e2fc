"""Properties of the dataset diff: a schema against itself is no change; a ClassLabel permutation is
always the one high `labels_reordered`; the card and `dataset_infos.json` are read as one schema."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from hubwatch.diff.dataset_meta import Column, dataset_meta
from hubwatch.diff.dataset_schema import diff_columns
from hubwatch.domain.records import FileRecord, Severity
from hubwatch.domain.snapshot import Snapshot

VALUES = st.sampled_from(["string", "int32", "int64", "float32", "bool", "large_string"])
NAMES = st.lists(st.text("abcdefgh", min_size=1, max_size=4), min_size=2, max_size=6, unique=True)
# A column spec: ("value", dtype) | ("label", names) | ("list", dtype)
SPECS = st.one_of(
    st.tuples(st.just("value"), VALUES), st.tuples(st.just("label"), NAMES), st.tuples(st.just("list"), VALUES)
)
FEATURES = st.dictionaries(st.text("xyzuvw_", min_size=1, max_size=6), SPECS, min_size=1, max_size=6)


def _column(name: str, spec: tuple[str, Any]) -> Column:
    kind, arg = spec
    if kind == "label":
        return Column(name, "class_label", tuple(arg))
    return Column(name, arg if kind == "value" else f"list[{arg}]")


def _card_entry(name: str, spec: tuple[str, Any]) -> dict[str, Any]:
    kind, arg = spec
    if kind == "label":
        return {"name": name, "dtype": {"class_label": {"names": {str(i): n for i, n in enumerate(arg)}}}}
    return {"name": name, "dtype": arg} if kind == "value" else {"name": name, "sequence": arg}


def _infos_entry(spec: tuple[str, Any]) -> dict[str, Any]:
    kind, arg = spec
    if kind == "label":
        return {"num_classes": len(arg), "names": list(arg), "id": None, "_type": "ClassLabel"}
    value = {"dtype": arg, "id": None, "_type": "Value"}
    return value if kind == "value" else {"feature": value, "length": -1, "id": None, "_type": "Sequence"}


def _snapshot(files: dict[str, bytes]) -> Snapshot:
    return Snapshot("0" * 40, {p: FileRecord(p, len(b)) for p, b in files.items()}, files)


@given(FEATURES)
@settings(max_examples=60, deadline=None)
def test_a_schema_against_itself_is_no_change(features: dict[str, tuple[str, Any]]) -> None:
    columns = tuple(_column(n, s) for n, s in features.items())
    assert diff_columns("README.md", "default", columns, columns) == []


@given(NAMES, st.randoms(use_true_random=False))
@settings(max_examples=60, deadline=None)
def test_a_classlabel_permutation_is_one_high_reorder(names: list[str], rnd: Any) -> None:
    shuffled = list(names)
    rnd.shuffle(shuffled)
    a, b = Column("label", "class_label", tuple(names)), Column("label", "class_label", tuple(shuffled))
    records = diff_columns("README.md", "default", (a,), (b,))
    if shuffled == names:
        assert records == []
    else:
        assert [(r.detail["op"], r.severity) for r in records] == [("labels_reordered", Severity.HIGH)]


@given(FEATURES)
@settings(max_examples=60, deadline=None)
def test_card_and_dataset_infos_read_as_one_schema(features: dict[str, tuple[str, Any]]) -> None:
    card = {"dataset_info": {"features": [_card_entry(n, s) for n, s in features.items()],
                             "splits": [{"name": "train", "num_examples": 3, "num_bytes": 30}]}}  # fmt: skip
    readme = ("---\n" + yaml.safe_dump(card, sort_keys=False) + "---\n").encode()
    infos = {"default": {"features": {n: _infos_entry(s) for n, s in features.items()},
                         "splits": {"train": {"name": "train", "num_examples": 3, "num_bytes": 30}}}}  # fmt: skip
    from_card = dataset_meta(_snapshot({"README.md": readme}))
    from_infos = dataset_meta(_snapshot({"dataset_infos.json": json.dumps(infos).encode()}))
    assert (from_card.source, from_infos.source) == ("README.md", "dataset_infos.json")
    assert from_card.configs["default"].columns == from_infos.configs["default"].columns
    assert from_card.configs["default"].columns == tuple(_column(n, s) for n, s in features.items())
    assert from_card.configs["default"].splits == from_infos.configs["default"].splits
