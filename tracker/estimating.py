"""Runs the estimator on a snapshot and turns a moved estimate into a change record."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from hubwatch.storage.records import ChangeRecord, Kind, Severity
from hubwatch.tracker.snapshot import Snapshot

__all__ = ["estimate_change", "estimate_snapshot", "snapshot_manifest"]

log = logging.getLogger(__name__)


def snapshot_manifest(snapshot: Snapshot) -> dict[str, Any] | None:
    """Tensor name → {"dtype", "shape"} over every safetensors header of the snapshot."""
    manifest: dict[str, Any] = {}
    for _path, header in sorted(snapshot.safetensors.items()):
        manifest.update(header)
    return manifest or None


def _json_object(snapshot: Snapshot, path: str) -> dict[str, Any] | None:
    raw = snapshot.contents.get(path)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def estimate_snapshot(snapshot: Snapshot) -> tuple[str, dict[str, Any]] | None:
    """(estimator version, JSON estimate) of the revision, or None when it has no usable config."""
    from hubwatch.estimator import ESTIMATOR_VERSION, EstimatorError, estimate_revision

    config = _json_object(snapshot, "config.json")
    if config is None:
        return None
    try:
        result = estimate_revision(config, manifest=snapshot_manifest(snapshot))
    except EstimatorError as exc:
        # A config the estimator cannot read is recorded, not fatal: the revision is still tracked.
        return ESTIMATOR_VERSION, {"error": str(exc)}
    return ESTIMATOR_VERSION, dict(result)


def estimate_change(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> ChangeRecord | None:
    """A change when parameters, memory or card fit moved between two stored estimates."""
    from hubwatch.estimator import memory_delta_summary

    if not old or not new or "error" in old or "error" in new:
        return None
    delta = memory_delta_summary(old, new)
    if delta is None:
        return None
    summary, detail = delta
    return ChangeRecord(
        kind=Kind.ARCHITECTURE if detail.get("params_changed") else Kind.CONFIG,
        severity=Severity.MEDIUM if detail.get("fit_changed") else Severity.LOW,
        path="estimate",
        summary=summary,
        detail={"file": "config.json", "key": None, "old": None, "new": None, **detail},
        direction="risk",
    )
