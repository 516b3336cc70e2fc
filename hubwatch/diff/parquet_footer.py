"""A parquet file's footer read without a parquet library: its rows and columns, from the footer's bytes
alone, within bounds, for the hub's parquet conversion (`dataset_parquet`).

A parquet file ends with its footer (a Thrift `FileMetaData`, compact protocol), the footer's length
(4 bytes, little-endian) and `PAR1`. `footer_length(tail)` reads the length from the last 8 bytes;
`read_footer(footer)` parses the `FileMetaData` and keeps `num_rows`, the schema's top-level columns
and, where the writer left it (the `datasets` library and the hub's converter do), the `huggingface`
key's features, in the dataset vocabulary of `dataset_meta` (ClassLabel names included). Row groups,
statistics and page indexes are stepped over, never kept: no value of a row is read.

The bytes are the hub's, so hostile: a footer past `MAX_FOOTER_BYTES`, nesting past `MAX_DEPTH`,
more than `MAX_VALUES` Thrift values, a length or count beyond the bytes left, an unknown type, or a
`FileMetaData` without rows or schema is a `ParquetFooterError` (a `ValueError`) saying which; the
reader never recurses without bound and never allocates more than the footer's size.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from hubwatch.domain.remote_data import load_remote_json

from .dataset_meta import Column, infos_columns

__all__ = ["MAGIC", "MAX_DEPTH", "MAX_FOOTER_BYTES", "MAX_VALUES", "Footer", "ParquetFooterError", "footer_length",
           "read_footer"]  # fmt: skip

MAGIC = b"PAR1"
MAX_FOOTER_BYTES = 1024 * 1024  # the hub converter's footers are a few KiB to a few hundred
MAX_DEPTH = 32  # a schema nests a column's lists and structs; Thrift's own structs add a few levels
MAX_VALUES = 500_000  # Thrift values in one footer (row groups × columns × their fields)
_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)
# Parquet's physical types and the converted types it writes beside them (parquet.thrift).
_PHYSICAL = {0: "bool", 1: "int32", 2: "int64", 3: "int96", 4: "float32", 5: "float64", 6: "binary",
             7: "fixed_size_binary"}  # fmt: skip
_CONVERTED = {0: "string", 4: "string", 5: "decimal", 6: "date32", 7: "time32", 8: "time64", 9: "timestamp[ms]",
              10: "timestamp[us]", 11: "uint8", 12: "uint16", 13: "uint32", 14: "uint64", 15: "int8", 16: "int16",
              17: "int32", 18: "int64", 19: "string"}  # fmt: skip


class ParquetFooterError(ValueError):
    """A parquet footer that is not read: what is wrong with it, in one line."""


@dataclass(frozen=True)
class Footer:
    """What one file's footer says: its rows, and its columns (the `huggingface` features where the
    writer kept them, else the parquet schema's top-level columns)."""

    rows: int
    columns: tuple[Column, ...]


def footer_length(tail: bytes, size: int | None = None) -> int:
    """The footer's length from a file's last bytes (at least 8); `size` the file's, when known."""
    if len(tail) < 8 or tail[-4:] != MAGIC:
        raise ParquetFooterError("not a parquet file: it does not end with PAR1")
    length = int.from_bytes(tail[-8:-4], "little")
    if length > MAX_FOOTER_BYTES:
        raise ParquetFooterError(f"footer of {length:,} bytes, past the {MAX_FOOTER_BYTES:,} read")
    if length == 0 or (size is not None and length + 12 > size):
        raise ParquetFooterError(f"footer length {length:,} does not fit a file of {size if size is not None else '?'} bytes")
    return length


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.values = 0

    def fail(self, what: str) -> ParquetFooterError:
        return ParquetFooterError(f"footer unreadable at byte {self.pos:,} of {len(self.data):,}: {what}")

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise self.fail("it ends inside a value (truncated)")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise self.fail("a variable-length integer longer than 10 bytes")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise self.fail(f"a length of {n:,} bytes beyond the {len(self.data) - self.pos:,} left")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def count(self) -> None:
        self.values += 1
        if self.values > MAX_VALUES:
            raise self.fail(f"more than {MAX_VALUES:,} values")

    def value(self, kind: int, depth: int) -> Any:
        """One value of compact type `kind`: ints, floats, bytes, lists and structs ({field id: value})."""
        self.count()
        if depth > MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH}")
        if kind in (_TRUE, _FALSE):
            return kind == _TRUE
        if kind == _BYTE:
            return self.byte()
        if kind in (_I16, _I32, _I64):
            return self.zigzag()
        if kind == _DOUBLE:
            return struct.unpack("<d", self.take(8))[0]
        if kind == _BINARY:
            return self.take(self.varint())
        if kind in (_LIST, _SET):
            header = self.byte()
            size, element = header >> 4, header & 0x0F
            if size == 15:
                size = self.varint()
            if size > len(self.data) - self.pos:  # each element takes at least one byte
                raise self.fail(f"a list of {size:,} elements in {len(self.data) - self.pos:,} bytes")
            if element in (_TRUE, _FALSE):  # a list's booleans are one byte each
                return [self.byte() == _TRUE for _ in range(size)]
            return [self.value(element, depth + 1) for _ in range(size)]
        if kind == _MAP:
            size = self.varint()
            if size == 0:
                return []
            types = self.byte()
            if size > len(self.data) - self.pos:
                raise self.fail(f"a map of {size:,} entries in {len(self.data) - self.pos:,} bytes")
            # As (key, value) pairs: a hostile key may be a list or struct, and no parquet field is a map.
            return [(self.value(types >> 4, depth + 1), self.value(types & 0x0F, depth + 1)) for _ in range(size)]
        if kind == _STRUCT:
            return self.struct(depth + 1)
        raise self.fail(f"unknown Thrift compact type {kind}")

    def struct(self, depth: int, keep: frozenset[int] | None = None) -> dict[int, Any]:
        """A struct's fields by id; with `keep`, only those (the others are read over, not kept)."""
        fields: dict[int, Any] = {}
        last = 0
        while True:
            header = self.byte()
            if header == _STOP:
                return fields
            delta, kind = header >> 4, header & 0x0F
            last = last + delta if delta else self.zigzag()
            value = self.value(kind, depth)
            if keep is None or last in keep:
                fields[last] = value


def _text(value: Any) -> str | None:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else None


def _leaf_type(element: dict[int, Any]) -> str:
    """A leaf's written-out type: its converted type, else its physical one."""
    converted = element.get(6)
    if isinstance(converted, int) and converted in _CONVERTED:
        return _CONVERTED[converted]
    physical = element.get(1)
    return _PHYSICAL.get(physical, "unknown") if isinstance(physical, int) else "unknown"


def _schema_columns(schema: list[Any]) -> tuple[Column, ...]:
    """The top-level columns of a flattened parquet schema (depth-first, `num_children` per group):
    a LIST group (`col (LIST) { repeated group list { element } }`) is `list[<element's type>]`,
    another group `struct{…}`, a leaf its converted or physical type."""
    elements = [e for e in schema if isinstance(e, dict)]
    if len(elements) != len(schema) or not elements:
        raise ParquetFooterError("footer's schema holds something other than schema elements")
    position = 1

    def node(depth: int) -> tuple[str, str]:
        nonlocal position
        if position >= len(elements) or depth > MAX_DEPTH:
            raise ParquetFooterError("footer's schema names more children than it holds")
        element = elements[position]
        position += 1
        name = _text(element.get(4)) or "?"
        count = element.get(5)
        if not isinstance(count, int) or count <= 0:
            return name, _leaf_type(element)
        start = position
        children = [node(depth + 1) for _ in range(count)]
        if element.get(6) == 3 and len(children) == 1:  # LIST
            repeated = elements[start]
            inner = children[0][1]
            if isinstance(repeated.get(5), int) and repeated[5] == 1:  # the repeated group holds the element
                inner = inner[inner.index(": ") + 2:-1]
            return name, f"list[{inner}]"
        return name, "struct{" + ", ".join(f"{n}: {t}" for n, t in children) + "}"

    top = elements[0].get(5)
    return tuple(Column(*node(1)) for _ in range(top if isinstance(top, int) and top > 0 else 0))


def _hf_columns(metadata: Any) -> tuple[Column, ...] | None:
    """The `datasets` features the writer kept under the `huggingface` key, when readable."""
    for entry in metadata if isinstance(metadata, list) else ():
        if isinstance(entry, dict) and entry.get(1) == b"huggingface" and isinstance(entry.get(2), bytes):
            try:
                doc = load_remote_json(entry[2])
            except ValueError:
                return None
            info = doc.get("info") if isinstance(doc, dict) else None
            features = info.get("features") if isinstance(info, dict) else None
            return infos_columns(features) if isinstance(features, dict) else None
    return None


def read_footer(footer: bytes) -> Footer:
    """Rows and columns of one parquet footer (the `FileMetaData` bytes before its length and PAR1)."""
    if len(footer) > MAX_FOOTER_BYTES:
        raise ParquetFooterError(f"footer of {len(footer):,} bytes, past the {MAX_FOOTER_BYTES:,} read")
    reader = _Reader(footer)
    meta = reader.struct(0, keep=frozenset({2, 3, 5}))  # schema, num_rows, key_value_metadata
    rows, schema = meta.get(3), meta.get(2)
    if not isinstance(rows, int) or rows < 0:
        raise ParquetFooterError("footer states no row count (FileMetaData.num_rows)")
    if not isinstance(schema, list):
        raise ParquetFooterError("footer states no schema (FileMetaData.schema)")
    return Footer(rows, _hf_columns(meta.get(5)) or _schema_columns(schema))
