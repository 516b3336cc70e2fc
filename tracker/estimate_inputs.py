"""Estimator inputs from a Snapshot: config, weight manifest and tokenizer files (which file means what:
`hubwatch.estimator.inputs`, shared with the web app, which reads the same files from the store).

A hub revision already is a Snapshot (the tracker's, or `HubClient.fetch_estimate_inputs`'s
smaller one); a local model folder is read into one by `folder_snapshot`, which needs neither
the hub, the store nor the web app. `estimator_inputs(snapshot)` then reads all of them alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hubwatch.domain.files import FileRecord
from hubwatch.domain.remote_data import load_remote_json
from hubwatch.domain.snapshot import Snapshot, unreadable_header
from hubwatch.domain.parsed_json import remote_json
from hubwatch.estimator.inputs import (
    ESTIMATOR_FILES, EstimatorInputs, files_manifest, inputs_from_files, is_estimator_file,
)

if TYPE_CHECKING:
    from hubwatch.estimator import Manifest

__all__ = ["ESTIMATOR_FILES", "EstimatorInputs", "InputError", "estimator_inputs", "file_snapshot", "folder_snapshot",
           "is_estimator_file", "snapshot_manifest"]

# No config, tokenizer config or weight manifest comes near this: a bigger file is weights given by mistake.
MAX_JSON_BYTES = 64 * 1024 * 1024


class InputError(ValueError):
    """A local model file that could not be read (missing, invalid JSON, not an object)."""


def _json_object(snapshot: Snapshot, path: str) -> dict[str, Any] | None:
    # Inside a poll's `parse_once` block the diff's parse of the same bytes is read, not redone
    # (the estimator only reads its inputs).
    raw = snapshot.contents.get(path)
    if raw is None:
        return None
    try:
        value = remote_json(raw)
    except ValueError:  # not JSON, not UTF-8, too large or too deeply nested
        return None
    return value if isinstance(value, dict) else None


def _readable_headers(snapshot: Snapshot) -> dict[str, Mapping[str, Any]] | None:
    """The safetensors headers when every one of them was readable (else None: the index counts)."""
    readable = {f: h for f, h in snapshot.safetensors.items() if unreadable_header(h) is None}
    return readable if readable and len(readable) == len(snapshot.safetensors) else None


def snapshot_manifest(snapshot: Snapshot, config: Mapping[str, Any]) -> Manifest | None:
    """The checkpoint as the estimator reads it: a `weights.json` manifest, else the safetensors
    headers, else the index's total size (with the config's dtype)."""
    return files_manifest(lambda path: _json_object(snapshot, path), snapshot.contents, _readable_headers(snapshot),
                          config)


def estimator_inputs(snapshot: Snapshot) -> EstimatorInputs | None:
    """The estimator's inputs from a snapshot, or None when it has no readable config.json."""
    return inputs_from_files(lambda path: _json_object(snapshot, path), snapshot.contents,
                             _readable_headers(snapshot), snapshot.sha or None)


def _read_json(path: Path) -> bytes:
    """The bytes of a local JSON object file, checked: size, UTF-8, valid JSON, an object."""
    try:
        size = path.stat().st_size
        if size > MAX_JSON_BYTES:
            raise InputError(f"{path}: {size / 1e6:,.0f} MB is too large to be a JSON config (weights?)")
        raw = path.read_bytes()
        value = load_remote_json(raw)  # what estimator_inputs reads back must parse there too
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except ValueError as exc:  # not UTF-8, not JSON, or nested deeper than the limit
        raise InputError(f"{path}: not valid JSON ({exc})") from exc
    except RecursionError as exc:
        raise InputError(f"{path}: not valid JSON (nested too deeply to be a config)") from exc
    if not isinstance(value, dict):
        raise InputError(f"{path}: expected a JSON object, got {type(value).__name__}")
    return raw


def _safetensors_header(path: Path) -> dict[str, Any]:
    """The JSON header of a local safetensors file (8-byte little-endian length, then the header): never the
    weights."""
    try:
        with path.open("rb") as f:
            head = f.read(8)
            size = int.from_bytes(head, "little") if len(head) == 8 else -1
            raw = f.read(size) if 2 <= size <= min(MAX_JSON_BYTES, path.stat().st_size - 8) else None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if raw is None:
        raise InputError(f"{path}: not a safetensors file (a Git LFS pointer, or truncated?)")
    try:
        header = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{path}: the safetensors header is not valid JSON") from exc
    if not isinstance(header, dict):
        raise InputError(f"{path}: the safetensors header is not a JSON object")
    return header


def file_snapshot(path: Path) -> Snapshot:
    """A lone config.json file as a snapshot (no manifest, no tokenizer files)."""
    return Snapshot(sha="", files={"config.json": FileRecord("config.json", None)},
                    contents={"config.json": _read_json(path)})


def folder_snapshot(folder: Path) -> Snapshot:
    """A local model folder as a snapshot of what the estimator reads (every file checked as read).

    The weight manifest is `weights.json` when present, else the headers of the folder's
    `*.safetensors` files, else the index (also when the shards are unreadable, e.g. LFS pointers).
    """
    if not (folder / "config.json").is_file():
        raise InputError(f"{folder}: the folder has no config.json")
    files = {p.name: FileRecord(p.name, p.stat().st_size) for p in sorted(folder.iterdir()) if p.is_file()}
    wanted = [*ESTIMATOR_FILES, "weights.json"]
    indexes = sorted(n for n in files if n.endswith(".safetensors.index.json"))
    contents = {name: _read_json(folder / name) for name in wanted if name in files}
    headers: dict[str, Mapping[str, Any]] = {}
    shards = [n for n in files if n.endswith(".safetensors")]
    if "weights.json" not in contents and shards:
        try:
            headers = {name: _safetensors_header(folder / name) for name in shards}
        except InputError:
            if not indexes:
                raise
            headers = {}
    if "weights.json" not in contents and not headers and indexes:
        contents[indexes[0]] = _read_json(folder / indexes[0])
    return Snapshot(sha="", files=files, contents=contents, safetensors=headers)
