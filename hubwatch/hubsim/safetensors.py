"""Synthesised safetensors files: a real header from a `weights.json` spec, then virtual zero bytes.

A history folder may describe weights instead of holding them: `vN/weights.json` maps a
safetensors file name to its tensors (`{"dtype": "BF16", "shape": [..]}`) plus an optional
`"__metadata__"` of string values. From that we build the exact header a real file would
carry (u64 little-endian length, JSON with `data_offsets`, padded to 8 bytes) and treat the
tensor data as zeros that are never materialised: any byte range is produced on demand.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

__all__ = [
    "DTYPE_SIZES",
    "HASH_LIMIT",
    "VirtualSafetensors",
    "WeightsSpecError",
    "parse_weights_json",
    "synthesize",
]

# Bytes per element of each safetensors dtype we can lay out (byte-aligned ones only).
DTYPE_SIZES: Mapping[str, int] = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "I64": 8,
    "U64": 8,
    "F64": 8,
    "C64": 8,
}

# Files up to this size get their true sha256; larger ones a documented stand-in (see below).
HASH_LIMIT = 64 * 1024 * 1024
_CHUNK = 1024 * 1024
_ZEROS = bytes(_CHUNK)


class WeightsSpecError(ValueError):
    """A weights.json is malformed; the message names the file and the tensor."""


@dataclass(frozen=True)
class VirtualSafetensors:
    """One synthesised file: `header` is its first bytes (length prefix included), then zeros."""

    header: bytes
    data_size: int
    tensors: Mapping[str, Mapping[str, object]]  # name → {"dtype", "shape", "data_offsets"}
    metadata: Mapping[str, str] | None

    @property
    def size(self) -> int:
        return len(self.header) + self.data_size

    def iter_bytes(self, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """Yield bytes `start..end` (end inclusive, default: last byte) in chunks of at most 1 MiB."""
        last = self.size - 1 if end is None else min(end, self.size - 1)
        pos = start
        while pos <= last:
            if pos < len(self.header):
                piece = self.header[pos : min(len(self.header), last + 1, pos + _CHUNK)]
            else:
                piece = _ZEROS[: min(_CHUNK, last + 1 - pos)]
            yield piece
            pos += len(piece)

    def read(self, start: int = 0, end: int | None = None) -> bytes:
        """Bytes `start..end` (inclusive) as one value; for small ranges only."""
        return b"".join(self.iter_bytes(start, end))

    def sha256(self) -> str:
        """The true sha256 up to HASH_LIMIT bytes; beyond, sha256 of a descriptor of the layout.

        Hashing gigabytes of zeros at start-up would be slow and proves nothing, so large files
        get a stable stand-in: sha256(b"hubsim-virtual\\0" + header + decimal data size).
        """
        if self.size <= HASH_LIMIT:
            digest = hashlib.sha256()
            for chunk in self.iter_bytes():
                digest.update(chunk)
            return digest.hexdigest()
        return hashlib.sha256(b"hubsim-virtual\0" + self.header + str(self.data_size).encode()).hexdigest()

    def parameter_counts(self) -> dict[str, int]:
        """Number of elements per dtype (what the hub reports as `safetensors.parameters`)."""
        counts: dict[str, int] = {}
        for info in self.tensors.values():
            shape = info["shape"]
            assert isinstance(shape, list)
            n = 1
            for dim in shape:
                n *= int(dim)
            dtype = str(info["dtype"])
            counts[dtype] = counts.get(dtype, 0) + n
        return counts


def _tensor(file: str, name: str, raw: object) -> tuple[str, list[int]]:
    where = f"{file}: tensor {name!r}"
    if not isinstance(raw, Mapping):
        raise WeightsSpecError(f"{where}: expected an object with dtype and shape")
    dtype = raw.get("dtype")
    shape = raw.get("shape")
    if not isinstance(dtype, str) or dtype not in DTYPE_SIZES:
        raise WeightsSpecError(f"{where}: unknown dtype {dtype!r} (one of {', '.join(DTYPE_SIZES)})")
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise WeightsSpecError(f"{where}: shape must be a list of non-negative integers, got {shape!r}")
    return dtype, list(shape)


def synthesize(file: str, spec: Mapping[str, object]) -> VirtualSafetensors:
    """Lay out one safetensors file from its spec (tensor name → dtype/shape, `__metadata__`)."""
    metadata: dict[str, str] | None = None
    raw_meta = spec.get("__metadata__")
    if raw_meta is not None:
        if not isinstance(raw_meta, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in raw_meta.items()
        ):
            raise WeightsSpecError(f"{file}: __metadata__ must map strings to strings")
        metadata = dict(raw_meta)
    tensors: dict[str, dict[str, object]] = {}
    offset = 0
    for name in sorted(k for k in spec if k != "__metadata__"):
        dtype, shape = _tensor(file, name, spec[name])
        n = DTYPE_SIZES[dtype]
        for dim in shape:
            n *= dim
        tensors[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    header_obj: dict[str, object] = {}
    if metadata is not None:
        header_obj["__metadata__"] = metadata
    header_obj.update(tensors)
    text = json.dumps(header_obj, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the format pads the header with spaces to 8-byte alignment
    return VirtualSafetensors(
        header=struct.pack("<Q", len(text)) + text, data_size=offset, tensors=tensors, metadata=metadata
    )


def parse_weights_json(raw: bytes, where: str) -> dict[str, VirtualSafetensors]:
    """Parse a weights.json body into file name → synthesised file; `where` names it in errors."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise WeightsSpecError(f"{where}: not valid JSON ({exc})") from exc
    if not isinstance(data, Mapping):
        raise WeightsSpecError(f"{where}: expected an object mapping file names to tensors")
    files: dict[str, VirtualSafetensors] = {}
    for file, spec in data.items():
        if not isinstance(file, str) or not file.endswith(".safetensors") or file.startswith("/") or ".." in file:
            raise WeightsSpecError(f"{where}: {file!r} is not a relative *.safetensors file name")
        if not isinstance(spec, Mapping):
            raise WeightsSpecError(f"{where}: {file}: expected an object mapping tensor names to specs")
        files[file] = synthesize(f"{where}: {file}", spec)
    return files
