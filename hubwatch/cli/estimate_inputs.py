"""Reads one `hubwatch estimate` target: a config.json path, a model folder, or `org/name` on the hub."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hubwatch.estimator.lints import merge_special_tokens
from hubwatch.estimator.manifest import Manifest
from hubwatch.domain.remote_data import load_remote_json

__all__ = ["TargetError", "TargetInputs", "load_target"]


class TargetError(ValueError):
    """A target that could not be read (missing file, invalid JSON, not a repo id)."""


class _Hub(Protocol):
    def fetch_estimate_inputs(self, repo_id: str, revision: str | None = None) -> Any: ...

    def listing(self, repo: Any, sha: str) -> Mapping[str, Any]: ...

    def download(self, repo: Any, sha: str, path: str, *, expected_size: int | None = None) -> bytes: ...


@dataclass(frozen=True)
class TargetInputs:
    """What the estimator needs of one target, and where it came from."""

    target: str
    source: str  # "file", "folder" or "hub"
    config: dict[str, Any]
    manifest: Manifest | None
    tokenizer_config: dict[str, Any] | None
    generation_config: dict[str, Any] | None
    revision: str | None = None


# No config, tokenizer config or weight manifest comes near this: a bigger file is weights given by mistake.
MAX_JSON_BYTES = 64 * 1024 * 1024


def _read_json(path: Path) -> Any:
    try:
        size = path.stat().st_size
        if size > MAX_JSON_BYTES:
            raise TargetError(f"{path}: {size / 1e6:,.0f} MB is too large to be a JSON config (weights?)")
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TargetError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TargetError(f"{path}: not valid JSON ({exc})") from exc
    except RecursionError as exc:
        raise TargetError(f"{path}: not valid JSON (nested too deeply to be a config)") from exc


def _object(path: Path) -> dict[str, Any]:
    value = _read_json(path)
    if not isinstance(value, dict):
        raise TargetError(f"{path}: expected a JSON object, got {type(value).__name__}")
    return value


def _optional(folder: Path, name: str) -> dict[str, Any] | None:
    path = folder / name
    return _object(path) if path.is_file() else None


def _safetensors_header(path: Path) -> dict[str, Any]:
    """The JSON header of a local safetensors file (8-byte little-endian length, then the header): never the
    weights."""
    try:
        with path.open("rb") as f:
            head = f.read(8)
            size = int.from_bytes(head, "little") if len(head) == 8 else -1
            raw = f.read(size) if 2 <= size <= min(MAX_JSON_BYTES, path.stat().st_size - 8) else None
    except OSError as exc:
        raise TargetError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if raw is None:
        raise TargetError(f"{path}: not a safetensors file (a Git LFS pointer, or truncated?)")
    try:
        header = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise TargetError(f"{path}: the safetensors header is not valid JSON") from exc
    if not isinstance(header, dict):
        raise TargetError(f"{path}: the safetensors header is not a JSON object")
    return header


def _folder_manifest(folder: Path, config: dict[str, Any]) -> Manifest | None:
    """The checkpoint manifest: `weights.json` (file → tensor → dtype/shape), else the headers of the folder's
    `*.safetensors` files, else the index's total size (also when the shards are unreadable, e.g. LFS pointers)."""
    weights = folder / "weights.json"
    if weights.is_file():
        return Manifest.from_weights_json(_object(weights))
    indexes = sorted(folder.glob("*.safetensors.index.json"))
    shards = sorted(p for p in folder.glob("*.safetensors") if p.is_file())
    if shards:
        try:
            return Manifest.from_safetensors_headers({p.name: _safetensors_header(p) for p in shards})
        except TargetError:
            if not indexes:
                raise
    if indexes:
        dtype = config.get("torch_dtype") or config.get("dtype")
        return Manifest.from_index(_object(indexes[0]), dtype=dtype if isinstance(dtype, str) else None)
    return None


def _hub_manifest(manifest: Any) -> Manifest | None:
    """The hub client's manifest: tensor → header (flat), or file → header."""
    if not manifest:
        return None
    flat = all(isinstance(v, Mapping) and "dtype" in v for v in manifest.values())
    headers = {"model.safetensors": manifest} if flat else manifest
    return Manifest.from_safetensors_headers(headers)


def load_target(target: str, *, revision: str | None, hub: _Hub | None) -> TargetInputs:
    """Read `target`; `hub` is used only for `org/name` targets that are not local paths."""
    path = Path(target).expanduser()
    if path.is_dir():
        config_path = path / "config.json"
        if not config_path.is_file():
            raise TargetError(f"{path}: the folder has no config.json")
        config = _object(config_path)
        tokenizer = merge_special_tokens(_optional(path, "tokenizer_config.json"),
                                         _optional(path, "special_tokens_map.json"))
        return TargetInputs(target, "folder", config, _folder_manifest(path, config), tokenizer,
                            _optional(path, "generation_config.json"))
    if path.is_file() or target.endswith(".json"):
        return TargetInputs(target, "file", _object(path), None, None, None)
    if target.startswith(("/", ".", "~")) or target.endswith(("/", "\\")) or target.count("/") > 1:
        raise TargetError(f"{target}: no such file or folder")
    if target.count("/") != 1:
        raise TargetError(f"{target}: no such file or folder, and not an org/name repo id")
    if hub is None:
        raise TargetError(f"{target}: not a local file or folder, and no hub client to look it up")
    inputs = hub.fetch_estimate_inputs(target, revision)
    config = dict(inputs.config)
    tokenizer = None if inputs.tokenizer_config is None else dict(inputs.tokenizer_config)
    files = hub.listing(inputs.repo, inputs.sha)

    def hub_json(path: str) -> Any:
        body = hub.download(inputs.repo, inputs.sha, path, expected_size=getattr(files[path], "size", None))
        try:
            return load_remote_json(body)
        except ValueError as exc:  # not JSON, too large or too deeply nested
            raise TargetError(f"{target}: {path} is not valid JSON ({exc})") from exc

    if "special_tokens_map.json" in files:
        tokenizer = merge_special_tokens(tokenizer, hub_json("special_tokens_map.json"))
    manifest = _hub_manifest(inputs.manifest)
    indexes = sorted(p for p in files if p.endswith(".safetensors.index.json") and "/" not in p)
    if manifest is None and indexes:  # no shard headers to read: the index's total size and the config's dtype
        dtype = config.get("torch_dtype") or config.get("dtype")
        manifest = Manifest.from_index(hub_json(indexes[0]), dtype=dtype if isinstance(dtype, str) else None)
    return TargetInputs(
        target, "hub", config, manifest, tokenizer,
        None if inputs.generation_config is None else dict(inputs.generation_config),
        revision=inputs.sha,
    )
