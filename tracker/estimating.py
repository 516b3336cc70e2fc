"""Runs the estimator on a snapshot and turns a moved estimate into a change record."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from hubwatch.domain.records import ChangeRecord, Direction, Kind, Severity
from hubwatch.domain.snapshot import Snapshot
from hubwatch.tracker.estimate_inputs import estimator_inputs, snapshot_manifest

if TYPE_CHECKING:
    from hubwatch.estimator import Estimate

__all__ = ["estimate_change", "estimate_snapshot", "snapshot_manifest"]

log = logging.getLogger(__name__)


def estimate_snapshot(snapshot: Snapshot) -> Estimate | None:
    """The Estimate of the revision, or None when it has no config.json.

    It holds the analysis (parameters, findings, layer count) and the memory report (memory per
    method, batch per card, cost). A config the estimator cannot read gives an Estimate with
    `error` set: recorded, never fatal to the poll.
    """
    from hubwatch.estimator import ESTIMATOR_VERSION, ConfigError, Estimate, analyze, estimate_revision

    inputs = estimator_inputs(snapshot)
    if inputs is None:
        return None
    try:
        analysis = analyze(inputs.config, manifest=inputs.manifest, tokenizer_config=inputs.tokenizer_config,
                           generation_config=inputs.generation_config, revision=snapshot.sha)
        return estimate_revision(analysis)
    except ConfigError as exc:
        return Estimate.failed(ESTIMATOR_VERSION, str(exc), exc.key)
    except Exception as exc:  # an estimator bug must not stop the revision from being tracked
        log.exception("estimator failed on %s", snapshot.sha)
        return Estimate.failed(ESTIMATOR_VERSION, f"estimator failed: {exc!r}")


def estimate_change(old: Estimate | None, new: Estimate | None) -> ChangeRecord | None:
    """A change when parameters, memory or card fit moved between two estimates.

    The severity is medium when a card stopped (or started) fitting a method at batch 1, else low.
    """
    from hubwatch.estimator import estimate_delta

    if old is None or new is None:
        return None
    delta = estimate_delta(old, new)
    if not delta:
        return None
    detail: dict[str, object] = {f"params_{p.kind}": {"old": p.old, "new": p.new} for p in delta.params}
    if delta.memory_text:
        detail["memory"] = delta.memory_text
    return ChangeRecord(
        kind=Kind.ARCHITECTURE if delta.params else Kind.CONFIG,
        severity=Severity.MEDIUM if delta.lost_cards or delta.gained_cards else Severity.LOW,
        path="estimate",
        summary="estimate moved: " + "; ".join(delta.lines),
        detail={"file": "config.json", "key": None, "old": None, "new": None, **detail},
        direction=Direction.UPDATE,  # neutral: pins before it have the old estimate
    )
