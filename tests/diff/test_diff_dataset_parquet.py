"""The parquet conversion as a snapshot keeps it (diff/dataset_parquet.py): the converter's layout read
per config and split, bounded, canonical, and never taken for one of the repo's own files."""

from __future__ import annotations

import json

from hubwatch.diff import diff_dataset_snapshots
from hubwatch.diff.dataset_meta import Column
from hubwatch.diff.dataset_parquet import (CONVERSION_PATH, MAX_SHARDS, conversion_document, footers_known,
                                           read_conversion, with_conversion)  # fmt: skip
from hubwatch.diff.parquet_footer import Footer
from hubwatch.domain.records import ChangeRecord, FileRecord, Kind, Severity
from hubwatch.domain.snapshot import Snapshot

from dataset_histories import REVIEWS, dataset_versions

SHA = "c" * 40
ENTRIES = [
    ("default/train/0000.parquet", 700, "a" * 64),
    ("default/train/0001.parquet", 300, "b" * 64),
    ("default/test/0000.parquet", 90, None),
    ("extra/partial-train/0000.parquet", 5000, "d" * 64),
    (".gitattributes", 2000, None),
    ("default/old-layout.parquet", 10, None),
]


def test_the_converter_layout_by_config_and_split() -> None:
    doc = conversion_document(SHA, "2025-03-03T10:00:00Z", ENTRIES)
    conversion = read_conversion(Snapshot("x", {}, {CONVERSION_PATH: doc}))
    assert conversion is not None and conversion.commit == SHA and conversion.date == "2025-03-03T10:00:00Z"
    assert {c: sorted(s) for c, s in conversion.configs.items()} == {"default": ["test", "train"], "extra": ["train"]}
    train = conversion.configs["default"]["train"]
    assert [s.path for s in train.shards] == ["default/train/0000.parquet", "default/train/0001.parquet"]
    assert train.bytes == 1000 and not train.partial
    assert conversion.configs["extra"]["train"].partial  # the converter took only its first part
    assert conversion.skipped == 1  # the old layout's file; .gitattributes is no shard
    assert conversion_document(SHA, "2025-03-03T10:00:00Z", reversed(ENTRIES)) == doc  # canonical bytes


def test_shards_past_the_bound_are_counted_not_kept() -> None:
    many = [(f"default/train/{i:05d}.parquet", 1, None) for i in range(MAX_SHARDS + 5)]
    conversion = read_conversion(Snapshot("x", {}, {CONVERSION_PATH: conversion_document(SHA, None, many)}))
    assert conversion is not None and len(conversion.configs["default"]["train"].shards) == MAX_SHARDS
    assert conversion.skipped == 5


def test_unreadable_or_foreign_documents_are_no_conversion() -> None:
    for raw in (b"", b"not json", b"[1, 2]", json.dumps({"configs": {}}).encode(), b"[" * 100_000):
        assert read_conversion(Snapshot("x", {}, {CONVERSION_PATH: raw})) is None
    assert read_conversion(Snapshot("x", {}, {})) is None
    odd = {"commit": SHA, "configs": {"a": {"train": {"shards": [{"path": 3}, {"path": "a/train/0.parquet", "size": -1}]}},
                                      "b": "nothing"}}  # fmt: skip
    conversion = read_conversion(Snapshot("x", {}, {CONVERSION_PATH: json.dumps(odd).encode()}))
    assert conversion is not None and [(s.path, s.size) for s in conversion.configs["a"]["train"].shards] == [
        ("a/train/0.parquet", None)] and conversion.configs["a"]["train"].bytes is None


def test_the_derived_file_is_not_a_repo_file_to_the_diff() -> None:
    versions = dataset_versions(REVIEWS)
    plain = versions["v3"]
    converted = with_conversion(plain, conversion_document(SHA, None, ENTRIES))
    assert converted.files[CONVERSION_PATH].size == len(converted.contents[CONVERSION_PATH])
    assert diff_dataset_snapshots(plain, converted) == []
    assert diff_dataset_snapshots(converted, plain) == []
    assert diff_dataset_snapshots(versions["v2"], converted) == diff_dataset_snapshots(versions["v2"], plain)


# ---- meaning: the conversion where the card states no splits ------------------------------------

CARD = b"---\nlicense: mit\nconfigs:\n- config_name: default\n  data_files: data/*.csv\n---\n# A CSV upload\n"


def _csv(sha: str, *entries: tuple[str, int | None, str | None], date: str = "2025-01-01T00:00:00Z") -> Snapshot:
    plain = Snapshot(sha, {"README.md": FileRecord("README.md", len(CARD), "r" * 40, None),
                           "data/train.csv": FileRecord("data/train.csv", 10, "t" * 40, None)}, {"README.md": CARD})
    return with_conversion(plain, conversion_document(sha[0] * 40, date, entries)) if entries else plain


def _ops(records: list[ChangeRecord]) -> set[tuple[str, str, str, str | None]]:
    return {(r.kind.value, r.severity.value, str(r.detail.get("op")), r.detail.get("split")) for r in records}


def test_splits_the_card_does_not_state_come_from_the_conversion() -> None:
    old = _csv("a" * 40, ("default/train/0000.parquet", 700, "1" * 64), ("default/test/0000.parquet", 90, "2" * 64))
    new = _csv("b" * 40, ("default/train/0000.parquet", 600, "3" * 64), ("default/train/0001.parquet", 400, "4" * 64),
               ("default/validation/0000.parquet", 50, "5" * 64), ("extra/train/0000.parquet", 5, "6" * 64))
    records = diff_dataset_snapshots(old, new)
    assert _ops(records) == {("splits", "low", "parquet", "train"), ("splits", "high", "removed", "test"),
                             ("splits", "medium", "added", "validation"), ("subsets", "low", "added", None)}
    train = next(r for r in records if r.detail.get("split") == "train")
    assert train.summary == ("default/train: parquet conversion 1 shard of 700 bytes → 2 shards of 1,000 bytes "
                             "(the viewer's copy of the split was rewritten; rows not stated)")
    assert train.detail["file"] == "refs/convert/parquet" and train.detail["new"] == {
        "rows": None, "bytes": None, "parquet_bytes": 1000, "shards": 2}
    test = next(r for r in records if r.detail.get("split") == "test")
    assert test.summary == "default: split test removed (in the hub's parquet conversion: 1 shard of 90 bytes)"
    extra = next(r for r in records if r.kind is Kind.SUBSETS)
    assert extra.summary == "config extra added (splits train, seen by the dataset viewer in the hub's parquet conversion)"
    assert diff_dataset_snapshots(new, new) == []


def test_a_side_without_a_conversion_says_nothing_of_splits() -> None:
    converted = _csv("a" * 40, ("default/train/0000.parquet", 700, None), ("default/test/0000.parquet", 90, None))
    plain = _csv("b" * 40)
    assert diff_dataset_snapshots(converted, plain) == []  # not removed: only not known for the newer one
    assert diff_dataset_snapshots(plain, converted) == []  # nor added
    first = diff_dataset_snapshots(None, converted)  # the first revision is described from its conversion
    assert all(r.severity is Severity.INFO for r in first)


def test_the_card_wins_over_the_conversion() -> None:
    v3 = dataset_versions(REVIEWS)["v3"]
    one = with_conversion(v3, conversion_document(SHA, None, ENTRIES[:3]))  # the card's one config
    other = with_conversion(v3, conversion_document("e" * 40, None, ENTRIES[:1]))
    assert diff_dataset_snapshots(one, other) == []  # the card states train and test: the shards say nothing


def test_footers_read_before_are_known_by_content() -> None:
    columns = (Column("text", "string"),)
    footers: dict[str, Footer | str] = {"default/train/0000.parquet": Footer(70, columns),
                                        "default/train/0001.parquet": Footer(30, columns),
                                        "default/test/0000.parquet": "default/test/0000.parquet: footer unreadable"}
    earlier = conversion_document(SHA, None, ENTRIES[:3], footers)
    moved = [("default/train/0005.parquet", 300, "b" * 64),  # train/0001's content under another path
             ("default/test/0000.parquet", 90, None),  # no oid: nothing to know it by
             ("default/train/0000.parquet", 700, "f" * 64)]  # same path, other content
    assert footers_known(earlier, moved) == {"default/train/0005.parquet": Footer(30, columns)}
    assert footers_known(b"not json", moved) == {}
    conversion = read_conversion(Snapshot("x", {}, {CONVERSION_PATH: earlier}))
    assert conversion is not None
    train, test = conversion.configs["default"]["train"], conversion.configs["default"]["test"]
    assert (train.rows, train.columns, train.note) == (100, columns, None)
    assert (test.rows, test.note) == (None, "default/test/0000.parquet: footer unreadable")
