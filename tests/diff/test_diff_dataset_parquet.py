"""The parquet conversion as a snapshot keeps it (diff/dataset_parquet.py): the converter's layout read
per config and split, bounded, canonical, and never taken for one of the repo's own files."""

from __future__ import annotations

import json

from hubwatch.diff import diff_dataset_snapshots
from hubwatch.diff.dataset_parquet import (CONVERSION_PATH, MAX_SHARDS, conversion_document, read_conversion,
                                           with_conversion)  # fmt: skip
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
