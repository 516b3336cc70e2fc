"""Semantic diff of the weight manifest: safetensors headers, the index and the shard files.

Reports tensors added/removed/reshaped, dtype changes, re-uploads with identical shapes but a new
LFS sha256, sharding changes, total_size changes, and total parameters and bytes before → after.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Mapping

from hubwatch.domain.records import ChangeRecord, Kind, Severity
from hubwatch.domain.snapshot import Snapshot, unreadable_header

from .changes import HAZARD, UPDATE, counted, make_change
from hubwatch.domain.parsed_json import remote_json

__all__ = ["DTYPE_BYTES", "diff_weights", "manifest_totals", "unreadable_header_records"]

DTYPE_BYTES = {
    "F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2,
    "U16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "I8": 1, "U8": 1, "BOOL": 1, "F4": 0.5,
    "F6_E2M3": 0.75, "F6_E3M2": 0.75,
}  # fmt: skip
_INDEX_SUFFIX = ".safetensors.index.json"
_Index = tuple[str | None, dict[str, str], int | None]
_Tensors = dict[str, tuple[str, str, tuple[int, ...]]]


def _tensors(snapshot: Snapshot) -> _Tensors:
    """tensor → (file, dtype, shape) from the safetensors headers."""
    out: dict[str, tuple[str, str, tuple[int, ...]]] = {}
    for file, header in snapshot.safetensors.items():
        for name, info in header.items():
            if name.startswith("__") or not isinstance(info, Mapping):
                continue
            shape = tuple(int(x) for x in info.get("shape") or ())
            out[name] = (file, str(info.get("dtype")), shape)
    return out


def _index(snapshot: Snapshot) -> _Index:
    """(index path, weight_map, metadata.total_size) of the first safetensors index."""
    for path in sorted(snapshot.contents):
        if path.endswith(_INDEX_SUFFIX):
            try:
                doc = remote_json(snapshot.contents[path])
            except ValueError:  # not JSON, not UTF-8, too large or too deeply nested
                return path, {}, None
            if not isinstance(doc, dict):
                return path, {}, None
            raw_map, meta = doc.get("weight_map"), doc.get("metadata")
            weight_map: dict[str, Any] = raw_map if isinstance(raw_map, dict) else {}
            total = meta.get("total_size") if isinstance(meta, dict) else None
            return path, {str(k): str(v) for k, v in weight_map.items()}, total if isinstance(total, int) else None
    return None, {}, None


def manifest_totals(snapshot: Snapshot) -> dict[str, int | None]:
    """Total parameters and bytes of the checkpoint (headers first, else the index's total_size)."""
    return _totals(_tensors(snapshot), _index(snapshot))


def _totals(tensors: _Tensors, index: _Index) -> dict[str, int | None]:
    if tensors:
        params = sum(math.prod(shape) for _, _, shape in tensors.values())
        size = sum(math.prod(shape) * DTYPE_BYTES.get(dtype, 0) for _, dtype, shape in tensors.values())
        return {"parameters": params, "bytes": int(size)}
    return {"parameters": None, "bytes": index[2]}


def _shards(snapshot: Snapshot, index: _Index) -> set[str]:
    listed = {p for p in snapshot.files if p.endswith(".safetensors")}
    return listed | set(snapshot.safetensors) | set(index[1].values())


def _human(n: int | None) -> str:
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(value) < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1000
    return str(n)


def _names(items: list[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def _manifest(snapshot: Snapshot) -> tuple[dict[str, bytes], dict[str, Any]]:
    """Everything the weight diff reads: the index files' bytes and the safetensors listing."""
    indexes = {p: raw for p, raw in snapshot.contents.items() if p.endswith(_INDEX_SUFFIX)}
    return indexes, {p: f for p, f in snapshot.files.items() if p.endswith(".safetensors")}


def diff_weights(old: Snapshot, new: Snapshot) -> list[ChangeRecord]:
    """Changes of the weight manifest between two revisions ([] at once when the index files, the
    safetensors listing and the headers are the same on both sides: nothing is parsed)."""
    if _manifest(old) == _manifest(new) and old.safetensors == new.safetensors:
        return []
    old_t, new_t = _tensors(old), _tensors(new)
    old_index, new_index = _index(old), _index(new)  # each read once
    totals = {"before": _totals(old_t, old_index), "after": _totals(new_t, new_index)}
    old_path, old_map, old_total = old_index
    new_path, new_map, new_total = new_index
    records: list[ChangeRecord] = []

    def add(kind: Kind, severity: Severity, key: str | None, before: Any, after: Any, summary: str, **extra: Any) -> None:
        file = new_path or old_path or "weights"
        records.append(make_change(kind, severity, file=file, key=key, old=before, new=after,
                                   summary=summary, direction=UPDATE, totals=totals, **extra))  # fmt: skip

    # Which tensors exist: headers when both sides have them, else the index weight maps.
    before_names = set(old_t) if old_t and new_t else set(old_map)
    after_names = set(new_t) if old_t and new_t else set(new_map)
    if before_names and after_names and before_names != after_names:
        added, removed = sorted(after_names - before_names), sorted(before_names - after_names)
        parts = [f"{counted(len(added), 'tensor')} added" if added else "", f"{len(removed)} removed" if removed else ""]
        add(Kind.WEIGHTS, Severity.HIGH, "tensors", removed, added,
            f"{' and '.join(p for p in parts if p)}: {_names(added or removed)}")  # fmt: skip
    common = sorted(set(old_t) & set(new_t))
    reshaped = [n for n in common if old_t[n][2] != new_t[n][2]]
    if reshaped:
        n = reshaped[0]
        add(Kind.WEIGHTS, Severity.HIGH, "shapes", {k: list(old_t[k][2]) for k in reshaped[:50]},
            {k: list(new_t[k][2]) for k in reshaped[:50]},
            f"{counted(len(reshaped), 'tensor')} reshaped: {n} {list(old_t[n][2])} → {list(new_t[n][2])}")  # fmt: skip
    dtype_moves = Counter((old_t[n][1], new_t[n][1]) for n in common if old_t[n][1] != new_t[n][1])
    if dtype_moves:
        text = ", ".join(f"{a} → {b} ({counted(c, 'tensor')})" for (a, b), c in dtype_moves.most_common())
        add(Kind.DTYPE, Severity.MEDIUM, "dtype", sorted({a for a, _ in dtype_moves}),
            sorted({b for _, b in dtype_moves}), f"weights dtype {text}")  # fmt: skip
    # Re-uploads: same shard path, new LFS sha256.
    reuploaded = sorted(
        p for p in set(old.files) & set(new.files)
        if p.endswith(".safetensors") and old.files[p].lfs_sha256 and new.files[p].lfs_sha256
        and old.files[p].lfs_sha256 != new.files[p].lfs_sha256
    )  # fmt: skip
    if reuploaded:
        same_shapes = not reshaped and not dtype_moves
        count = sum(1 for f, _, _ in new_t.values() if f in reuploaded)
        files = counted(len(reuploaded), "file")
        what = f"{counted(count, 'tensor')} in {files}" if count else files
        add(Kind.WEIGHTS, Severity.MEDIUM, "lfs_sha256",
            {p: old.files[p].lfs_sha256 for p in reuploaded}, {p: new.files[p].lfs_sha256 for p in reuploaded},
            f"weights re-uploaded: {what}" + (" with identical shapes and dtypes" if same_shapes and new_t else ""),
            files=reuploaded)  # fmt: skip
    old_shards, new_shards = _shards(old, old_index), _shards(new, new_index)
    if old_path != new_path or (old_shards and new_shards and old_shards != new_shards):
        if old_path and not new_path:
            summary = f"weight index {old_path} removed (was {counted(len(old_shards), 'shard')})"
        elif new_path and not old_path:
            summary = f"weight index {new_path} added ({counted(len(new_shards), 'shard')})"
        else:
            summary = f"sharding changed: {len(old_shards)} → {counted(len(new_shards), 'weight file')}"
        add(Kind.WEIGHTS, Severity.LOW, "shards", sorted(old_shards), sorted(new_shards), summary)
    if old_total is not None and new_total is not None and old_total != new_total:
        delta = new_total - old_total
        add(Kind.WEIGHTS, Severity.MEDIUM, "metadata.total_size", old_total, new_total,
            f"total_size {_human(old_total)} → {_human(new_total)} ({'+' if delta > 0 else ''}{delta} byte{'' if abs(delta) == 1 else 's'})")  # fmt: skip
    return records + unreadable_header_records(old, new)


def unreadable_header_records(old: Snapshot, new: Snapshot) -> list[ChangeRecord]:
    """A safetensors header that cannot be read is a finding on its revision (like invalid JSON);
    readable again later: a fix."""
    records: list[ChangeRecord] = []
    for file in sorted(set(old.safetensors) | set(new.safetensors)):
        before = unreadable_header(old.safetensors.get(file)) if file in old.safetensors else None
        after = unreadable_header(new.safetensors.get(file)) if file in new.safetensors else None
        mark = f"invalid_safetensors:{file}"
        if after is not None and before is None:
            records.append(make_change(
                Kind.WEIGHTS, Severity.HIGH, file=file, key=None, old=None, new=None, direction=HAZARD,
                summary=f"{file}: safetensors header cannot be read ({after})", error=after, hazards=[mark]))  # fmt: skip
        elif before is not None and after is None and file in new.safetensors:
            records.append(make_change(
                Kind.WEIGHTS, Severity.MEDIUM, file=file, key=None, old=None, new=None, direction=UPDATE,
                summary=f"{file}: safetensors header readable again", error=before, clears=[mark]))  # fmt: skip
    return records
