"""Reads one `hubwatch estimate` target: a config.json path, a model folder, or `org/name` on the hub.

Each is turned into a Snapshot (a file, a folder, or the hub's revision) and read by the one
builder of estimator inputs, `hubwatch.tracker.estimate_inputs.estimator_inputs`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from hubwatch.domain.remote_data import MAX_JSON_BYTES
from hubwatch.domain.snapshot import Snapshot
from hubwatch.estimator.manifest import Manifest
from hubwatch.estimator.frozen import frozen
from hubwatch.tracker.estimate_inputs import InputError, estimator_inputs, file_snapshot, folder_snapshot

__all__ = ["TargetError", "TargetInputs", "UnreadableTarget", "load_target"]

TargetError = InputError  # a target that could not be read (missing file, invalid JSON, not a repo id)


class UnreadableTarget(InputError):
    """A local target that is not a model config (missing, a folder without config.json, an empty
    file, not JSON, not a JSON object): bad input (exit 2), with the fix."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


_WHAT_TARGETS_ARE = "a config.json path, a folder holding config.json, or org/name on the hub"
_FIX_MISSING = f"check the path: a target is {_WHAT_TARGETS_ARE}"
_FIX_FOLDER = "point at a model folder that holds config.json, or at the config file itself"
_FIX_JSON = "correct the JSON (a config.json is one JSON object), or point at the model's config.json"
_FIX_OBJECT = 'pass a model config: one JSON object, such as {"model_type": "llama", "hidden_size": 4096, …}'
_FIX_OTHER = "fix or remove that file, or point at another target"
_FIX_LARGE = "pass the model's config.json, or the folder that holds it"
_FIX_SHARDS = ("fetch the shards (`git lfs pull`), or keep model.safetensors.index.json beside them: "
               "its total size is read instead")
_JSON_TYPES = {list: "a JSON array", str: "a JSON string", int: "a JSON number", float: "a JSON number",
               bool: "a JSON boolean", type(None): "JSON null"}


def _json_problem(path: Path) -> tuple[str, str] | None:
    """What is wrong with a local JSON file that failed to read, and the fix (None: nothing wrong with
    it; the reader failed on another file). Read only on failure."""
    try:
        size = path.stat().st_size
        if size > MAX_JSON_BYTES:
            return f"{size / 1e6:,.0f} MB, too large to be a JSON config (a weights file?)", _FIX_LARGE
        raw = path.read_bytes()
    except FileNotFoundError:
        return "no such file", _FIX_MISSING
    except OSError as exc:
        return f"cannot read ({exc.strerror or exc})", _FIX_MISSING
    if not raw.strip():
        return "empty file, not JSON", _FIX_JSON
    try:
        value = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (byte {exc.start}: {exc.reason}), so not JSON", _FIX_JSON
    except json.JSONDecodeError as exc:
        return f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})", _FIX_JSON
    except RecursionError:
        return "nested too deeply to be a config", _FIX_JSON
    if not isinstance(value, dict):
        return f"{_JSON_TYPES.get(type(value), 'JSON')}, not a config object", _FIX_OBJECT
    return None


def _unreadable(target: str, path: Path, exc: InputError) -> UnreadableTarget:
    """The reader's error about a local target, as one line naming the file and what is wrong, and a fix."""
    if path.is_dir():
        config = path / "config.json"
        if not config.is_file():
            return UnreadableTarget(f"{target}: the folder has no config.json", _FIX_FOLDER)
        found = _json_problem(config)
        shown = f"{target.rstrip('/')}/config.json"
        if found is None:  # config.json reads: another file of the folder stopped it (a shard, a tokenizer file)
            return UnreadableTarget(str(exc), _FIX_SHARDS if ".safetensors" in str(exc) else _FIX_OTHER)
    else:
        found, shown = _json_problem(path), target
    if found is None:
        return UnreadableTarget(str(exc), _FIX_OTHER)
    problem, fix = found
    return UnreadableTarget(f"{shown}: {problem}", fix)


class _Hub(Protocol):
    def fetch_estimate_inputs(self, repo_id: str, revision: str | None = None) -> Snapshot: ...


@frozen
class TargetInputs:
    """What the estimator needs of one target, and where it came from."""

    target: str
    source: str  # "file", "folder" or "hub"
    config: dict[str, Any]
    manifest: Manifest | None
    tokenizer_config: dict[str, Any] | None
    generation_config: dict[str, Any] | None
    revision: str | None = None


def _snapshot(target: str, revision: str | None, hub: _Hub | None) -> tuple[str, Snapshot]:
    path = Path(target).expanduser()
    try:
        if path.is_dir():
            return "folder", folder_snapshot(path)
        if path.is_file() or target.endswith(".json"):
            return "file", file_snapshot(path)
    except InputError as exc:
        raise _unreadable(target, path, exc) from exc
    if target.startswith(("/", ".", "~")) or target.endswith(("/", "\\")) or target.count("/") > 1:
        raise UnreadableTarget(f"{target}: no such file or folder", _FIX_MISSING)
    if target.count("/") != 1:
        raise UnreadableTarget(f"{target}: no such file or folder, and not an org/name repo id", _FIX_MISSING)
    if hub is None:
        raise TargetError(f"{target}: not a local file or folder, and no hub client to look it up")
    return "hub", hub.fetch_estimate_inputs(target, revision)


def load_target(target: str, *, revision: str | None, hub: _Hub | None) -> TargetInputs:
    """Read `target`; `hub` is used only for `org/name` targets that are not local paths."""
    source, snapshot = _snapshot(target, revision, hub)
    inputs = estimator_inputs(snapshot)
    if inputs is None:  # the file was checked when read: only an unreadable hub config gets here
        raise TargetError(f"{target}: config.json is not a readable JSON object")
    return TargetInputs(target, source, inputs.config, inputs.manifest, inputs.tokenizer_config,
                        inputs.generation_config, revision=inputs.revision)
