"""Test helper: read the history folders on disk (`<repo>/vN/`) into Snapshots and diff them."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any

from hubwatch.domain.records import ChangeRecord, FileRecord
from hubwatch.diff import diff_snapshots
from hubwatch.domain.snapshot import Snapshot, is_tracked

ROOT = Path(__file__).resolve().parents[2]
HISTORIES = ROOT / "tests" / "data" / "histories"
DEMO = ROOT / "hubwatch" / "hubsim" / "demo"
GOLDEN = Path(__file__).resolve().parent / "golden"

__all__ = ["GOLDEN", "all_histories", "golden_entries", "load_version", "make_snapshot", "replay", "versions"]


def all_histories() -> list[Path]:
    """Every history folder: the 21 test histories and the demo."""
    found = [p for p in sorted(HISTORIES.iterdir()) if (p / "HISTORY.tsv").exists()]
    return found + [p for p in sorted(DEMO.iterdir()) if (p / "HISTORY.tsv").exists()]


def versions(history: Path) -> list[dict[str, str]]:
    with (history / "HISTORY.tsv").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def load_version(folder: Path) -> Snapshot:
    """A version folder as a Snapshot: the listing, tracked contents, and weights.json as headers."""
    files: dict[str, FileRecord] = {}
    contents: dict[str, bytes] = {}
    safetensors: dict[str, Any] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        raw = path.read_bytes()
        if rel == "weights.json":
            safetensors = json.loads(raw)
            continue
        digest = hashlib.sha256(raw).hexdigest()
        files[rel] = FileRecord(rel, len(raw), blob_id=hashlib.sha1(raw).hexdigest(), content_sha256=digest)
        if is_tracked(rel):
            contents[rel] = raw
    for shard in safetensors:
        files.setdefault(shard, FileRecord(shard, None, lfs_sha256=hashlib.sha256(shard.encode()).hexdigest()))
    sha = hashlib.sha1(f"{folder.parent.name}/{folder.name}".encode()).hexdigest()
    return Snapshot(sha=sha, files=files, contents=contents, safetensors=safetensors)


def replay(history: Path) -> list[tuple[dict[str, str], list[ChangeRecord]]]:
    """Each version with the changes against its predecessor (v1 against nothing)."""
    out: list[tuple[dict[str, str], list[ChangeRecord]]] = []
    previous: Snapshot | None = None
    for row in versions(history):
        snapshot = load_version(history / row["version"])
        out.append((row, diff_snapshots(previous, snapshot)))
        previous = snapshot
    return out


def golden_entries(history: Path) -> list[dict[str, Any]]:
    """The golden form of a replay: per version, what_changed and the (kind, severity, …) found."""
    return [
        {
            "version": row["version"],
            "what_changed": row["what_changed"],
            "changes": [
                {"kind": c.kind.value, "severity": c.severity.value, "direction": c.direction,
                 "path": c.path, "summary": c.summary}
                for c in changes
            ],
        }  # fmt: skip
        for row, changes in replay(history)
    ]


def make_snapshot(
    contents: dict[str, bytes | str | Any] | None = None,
    *,
    listed: dict[str, str | None] | None = None,
    safetensors: dict[str, Any] | None = None,
) -> Snapshot:
    """A Snapshot from values: `contents` (dicts/lists are JSON-encoded), `listed` extra files
    (path → LFS sha256 or None) and safetensors headers (whose files are listed too)."""
    raw: dict[str, bytes] = {}
    for path, value in (contents or {}).items():
        if isinstance(value, bytes):
            raw[path] = value
        elif isinstance(value, str):
            raw[path] = value.encode()
        else:
            raw[path] = json.dumps(value, indent=2).encode()
    files = {p: FileRecord(p, len(b), content_sha256=hashlib.sha256(b).hexdigest()) for p, b in raw.items()}
    for path, lfs in (listed or {}).items():
        files[path] = FileRecord(path, 1, lfs_sha256=lfs)
    for path in safetensors or {}:
        files.setdefault(path, FileRecord(path, 1, lfs_sha256="0" * 64))
    return Snapshot(sha="0" * 40, files=files, contents=raw, safetensors=safetensors or {})
