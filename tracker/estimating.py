"""Runs the estimator on a snapshot and turns a moved estimate into a change record."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hubwatch.domain.records import ChangeRecord, Kind, Severity
from hubwatch.domain.remote_data import load_remote_json
from hubwatch.domain.snapshot import Snapshot

if TYPE_CHECKING:
    from hubwatch.estimator import Manifest

__all__ = ["estimate_change", "estimate_snapshot", "snapshot_manifest"]

log = logging.getLogger(__name__)


def _json_object(snapshot: Snapshot, path: str) -> dict[str, Any] | None:
    raw = snapshot.contents.get(path)
    if raw is None:
        return None
    try:
        value = load_remote_json(raw)
    except ValueError:  # not JSON, not UTF-8, too large or too deeply nested
        return None
    return value if isinstance(value, dict) else None


def snapshot_manifest(snapshot: Snapshot, config: Mapping[str, Any]) -> Manifest | None:
    """The checkpoint as the estimator reads it: safetensors headers, else the index's total size."""
    from hubwatch.estimator import Manifest

    if snapshot.safetensors:
        return Manifest.from_safetensors_headers(snapshot.safetensors)
    for path in sorted(snapshot.contents):
        if path.endswith(".safetensors.index.json") and "/" not in path:
            index = _json_object(snapshot, path)
            if index is not None:
                dtype = config.get("torch_dtype") or config.get("dtype")
                return Manifest.from_index(index, dtype=dtype if isinstance(dtype, str) else None)
    return None


def estimate_snapshot(snapshot: Snapshot) -> tuple[str, dict[str, Any]] | None:
    """(estimator version, JSON estimate) of the revision, or None when it has no config.json.

    The JSON holds the analysis (parameters, findings, layer count) and the memory report
    (memory per method, batch per card, cost). A config the estimator cannot read gives
    `{"error": …}`: recorded, never fatal to the poll.
    """
    from hubwatch.estimator import ESTIMATOR_VERSION, ConfigError, analyze, merge_special_tokens
    from hubwatch.estimator.memory_report import estimate_revision

    config = _json_object(snapshot, "config.json")
    if config is None:
        return None
    try:
        analysis = analyze(
            config,
            manifest=snapshot_manifest(snapshot, config),
            tokenizer_config=merge_special_tokens(
                _json_object(snapshot, "tokenizer_config.json"), _json_object(snapshot, "special_tokens_map.json")
            ),
            generation_config=_json_object(snapshot, "generation_config.json"),
            revision=snapshot.sha,
        )
        report = estimate_revision(analysis)
    except ConfigError as exc:
        return ESTIMATOR_VERSION, {"error": str(exc)}
    except Exception as exc:  # an estimator bug must not stop the revision from being tracked
        log.exception("estimator failed on %s", snapshot.sha)
        return ESTIMATOR_VERSION, {"error": f"estimator failed: {exc!r}"}
    body = analysis.to_json()
    structure = body.pop("structure", {}) or {}
    body["structure"] = {k: structure.get(k) for k in ("layers", "forward_pass_ok", "failures")}
    return ESTIMATOR_VERSION, {**body, **report}


def _params(estimate: Mapping[str, Any], key: str) -> int | None:
    params = estimate.get("params")
    value = params.get(key) if isinstance(params, Mapping) else None
    return value if isinstance(value, int) else None


def estimate_change(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> ChangeRecord | None:
    """A change when parameters, memory or card fit moved between two stored estimates."""
    from hubwatch.estimator.memory_report import memory_delta_summary

    if not old or not new or "error" in old or "error" in new:
        return None
    delta: dict[str, Any] = {}
    lines: list[str] = []
    for key in ("derived", "checkpoint"):
        a, b = _params(old, key), _params(new, key)
        if a is not None and b is not None and a != b:
            delta[f"params_{key}"] = {"old": a, "new": b}
            lines.append(f"{key} parameters {a:,} → {b:,}")
    memory = memory_delta_summary(dict(old), dict(new))
    if memory:
        delta["memory"] = memory
        lines.extend(memory.splitlines())
    if not lines:
        return None
    fit = bool(memory and ("no longer fits" in memory or "now fits" in memory))
    return ChangeRecord(
        kind=Kind.ARCHITECTURE if any(k.startswith("params_") for k in delta) else Kind.CONFIG,
        severity=Severity.MEDIUM if fit or "no longer fits" in (memory or "") else Severity.LOW,
        path="estimate",
        summary="estimate moved: " + "; ".join(lines),
        detail={"file": "config.json", "key": None, "old": None, "new": None, **delta},
        direction="risk",
    )
