"""The parquet footer reader (diff/parquet_footer.py) on real files pyarrow wrote (tests/data/datasets:
the reviews' conversion, `footers/nested.parquet`; recipe in tests/data/datasets/README.md), and on
hostile bytes: truncated, garbage, flipped, lengths and counts past the bounds, nesting without end.
Whatever the bytes, the answer is a Footer or a ParquetFooterError, never another exception."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from hubwatch.diff.dataset_meta import Column
from hubwatch.diff.parquet_footer import (MAX_DEPTH, MAX_FOOTER_BYTES, Footer, ParquetFooterError, footer_length,
                                          read_footer)  # fmt: skip

DATA = Path(__file__).resolve().parents[1] / "data" / "datasets"
REVIEWS = DATA / "hubwatch-test__reviews" / "PARQUET"


def _footer(path: Path) -> bytes:
    raw = path.read_bytes()
    length = footer_length(raw[-8:], len(raw))
    return raw[-8 - length:-8]


def test_rows_and_the_datasets_features_of_the_converter_files() -> None:
    v1 = read_footer(_footer(REVIEWS / "v1" / "default" / "train" / "0000.parquet"))
    assert v1 == Footer(100, (Column("text", "string"), Column("label", "class_label", ("neg", "pos")),
                              Column("score", "int32")))  # fmt: skip
    v3 = read_footer(_footer(REVIEWS / "v3" / "default" / "train" / "0000.parquet"))
    assert v3.rows == 150 and [(c.name, c.type) for c in v3.columns] == [
        ("text", "string"), ("label", "class_label"), ("score", "float32"), ("title", "string")]
    assert read_footer(_footer(REVIEWS / "v3" / "default" / "test" / "0000.parquet")).rows == 20


def test_the_parquet_schema_when_no_features_are_kept() -> None:
    footer = read_footer(_footer(DATA / "footers" / "nested.parquet"))
    assert footer.rows == 2
    assert [(c.name, c.type) for c in footer.columns] == [
        ("id", "int64"), ("tags", "list[string]"), ("meta", "struct{lang: string, score: float64}"),
        ("spans", "list[struct{start: int32, end: int32}]"), ("flag", "bool")]


def test_the_length_at_the_end_is_checked() -> None:
    with pytest.raises(ParquetFooterError, match="does not end with PAR1"):
        footer_length(b"PAR1 converted train v1 PAR0")
    with pytest.raises(ParquetFooterError, match="does not end with PAR1"):
        footer_length(b"PAR1")
    with pytest.raises(ParquetFooterError, match="past the"):
        footer_length((2**31).to_bytes(4, "little") + b"PAR1")
    with pytest.raises(ParquetFooterError, match="past the"):
        footer_length(b"PAR1 converted train v1 PAR1")  # the old stand-in: " v1 " read as a length
    with pytest.raises(ParquetFooterError, match="does not fit"):
        footer_length((500).to_bytes(4, "little") + b"PAR1", size=100)
    with pytest.raises(ParquetFooterError, match="does not fit"):
        footer_length((0).to_bytes(4, "little") + b"PAR1", size=100)
    with pytest.raises(ParquetFooterError, match="past the"):
        read_footer(b"\x00" * (MAX_FOOTER_BYTES + 1))


def test_hostile_footers_are_refused_with_a_reason() -> None:
    with pytest.raises(ParquetFooterError, match="truncated"):
        read_footer(b"\x15\x02")  # field 1 (i32) header, then the value's bytes run out
    with pytest.raises(ParquetFooterError, match="no row count"):
        read_footer(b"\x00")  # an empty struct
    with pytest.raises(ParquetFooterError, match="beyond"):
        read_footer(b"\x18\xff\xff\xff\x7f")  # a string of 268 M bytes in five
    with pytest.raises(ParquetFooterError, match="list of"):
        read_footer(b"\x19\xf5\xff\xff\xff\x0f")  # a list of 4 G elements
    with pytest.raises(ParquetFooterError, match="nested deeper"):
        read_footer(b"\x1c" * (MAX_DEPTH + 5))  # structs inside structs
    with pytest.raises(ParquetFooterError, match="unknown Thrift"):
        read_footer(b"\x1d")  # type 13 does not exist
    with pytest.raises(ParquetFooterError, match="longer than 10 bytes"):
        read_footer(b"\x15" + b"\xff" * 12)


def test_every_truncation_and_random_corruption_is_a_footer_or_the_error() -> None:
    real = [_footer(p) for p in sorted(REVIEWS.glob("*/*/*/*.parquet"))] + [_footer(DATA / "footers" / "nested.parquet")]
    rng = random.Random(33)
    started = time.monotonic()
    cases: list[bytes] = []
    for footer in real:
        cases += [footer[:n] for n in range(0, len(footer), 7)]
        for _ in range(150):
            flipped = bytearray(footer)
            for _ in range(rng.randint(1, 6)):
                flipped[rng.randrange(len(flipped))] = rng.randrange(256)
            cases.append(bytes(flipped))
    cases += [bytes(rng.randrange(256) for _ in range(rng.randint(0, 3000))) for _ in range(300)]
    outcomes = {"read": 0, "refused": 0}
    for case in cases:
        try:
            footer = read_footer(case)
        except ParquetFooterError:
            outcomes["refused"] += 1
        else:
            assert footer.rows >= 0 and all(isinstance(c.name, str) for c in footer.columns)
            outcomes["read"] += 1
    assert outcomes["refused"] > 0 and outcomes["read"] > 0
    assert time.monotonic() - started < 60
