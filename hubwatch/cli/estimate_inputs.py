"""Reads one `hubwatch estimate` target: a config.json path, a model folder, or `org/name` on the hub.

Each is turned into a Snapshot (a file, a folder, or the hub's revision) and read by the one
builder of estimator inputs, `hubwatch.tracker.estimate_inputs.estimator_inputs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hubwatch.domain.snapshot import Snapshot
from hubwatch.estimator.manifest import Manifest
from hubwatch.tracker.estimate_inputs import InputError, estimator_inputs, file_snapshot, folder_snapshot

__all__ = ["TargetError", "TargetInputs", "load_target"]

TargetError = InputError  # a target that could not be read (missing file, invalid JSON, not a repo id)


class _Hub(Protocol):
    def fetch_estimate_inputs(self, repo_id: str, revision: str | None = None) -> Snapshot: ...


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


def _snapshot(target: str, revision: str | None, hub: _Hub | None) -> tuple[str, Snapshot]:
    path = Path(target).expanduser()
    if path.is_dir():
        return "folder", folder_snapshot(path)
    if path.is_file() or target.endswith(".json"):
        return "file", file_snapshot(path)
    if target.startswith(("/", ".", "~")) or target.endswith(("/", "\\")) or target.count("/") > 1:
        raise TargetError(f"{target}: no such file or folder")
    if target.count("/") != 1:
        raise TargetError(f"{target}: no such file or folder, and not an org/name repo id")
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
