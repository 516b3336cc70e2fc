"""Runs the estimator on a snapshot and turns a moved estimate into a change record."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from hubwatch.domain.records import ChangeRecord, Direction, Kind, Severity
from hubwatch.domain.snapshot import Snapshot
from hubwatch.tracker.estimate_inputs import estimator_inputs, snapshot_manifest

if TYPE_CHECKING:
    from hubwatch.estimator.inputs import EstimatorInputs

if TYPE_CHECKING:
    from hubwatch.estimator import Estimate

__all__ = ["estimate_change", "estimate_snapshot", "estimate_with_inputs", "snapshot_manifest"]

log = logging.getLogger(__name__)


def estimate_snapshot(
    snapshot: Snapshot, previous: tuple[Snapshot, Estimate | None] | None = None
) -> Estimate | None:
    """The Estimate of the revision, or None when it has no config.json.

    It holds the analysis (parameters, findings, layer count) and the memory report (memory per
    method, batch per card, cost). A config the estimator cannot read gives an Estimate with
    `error` set: recorded, never fatal to the poll. With `previous` (the parent's snapshot and
    estimate): when the estimator reads the same inputs from both (config, checkpoint manifest,
    tokenizer and generation configs) and the parent's estimate is of this estimator version, it is
    reused for this revision (most commits change no config) instead of estimating again.
    """
    return estimate_with_inputs(snapshot, previous)[0]


def estimate_with_inputs(
    snapshot: Snapshot,
    previous: tuple[Snapshot, Estimate | None] | None = None,
    previous_inputs: EstimatorInputs | None = None,
) -> tuple[Estimate | None, EstimatorInputs | None]:
    """`estimate_snapshot`, and the estimator inputs read from `snapshot` (None: no config).

    `previous_inputs`: what this returned as the inputs of `previous`'s snapshot, when the caller
    kept them (the pipeline does, from one revision to the next); else they are read again.
    """
    from hubwatch.estimator import ESTIMATOR_VERSION, ConfigError, Estimate, analyze, estimate_revision

    inputs = estimator_inputs(snapshot)
    if inputs is None:
        return None, None
    if previous is not None:
        reused = _reused(inputs, snapshot.sha, *previous, before=previous_inputs)
        if reused is not None:
            return reused, inputs
    try:
        analysis = analyze(inputs.config, manifest=inputs.manifest, tokenizer_config=inputs.tokenizer_config,
                           generation_config=inputs.generation_config, revision=snapshot.sha)
        return estimate_revision(analysis), inputs
    except ConfigError as exc:
        return Estimate.failed(ESTIMATOR_VERSION, str(exc), exc.key), inputs
    except Exception as exc:  # an estimator bug must not stop the revision from being tracked
        log.exception("estimator failed on %s", snapshot.sha)
        return Estimate.failed(ESTIMATOR_VERSION, f"estimator failed: {exc!r}"), inputs


def _reused(
    inputs: EstimatorInputs, sha: str, parent: Snapshot, estimate: Estimate | None, *, before: EstimatorInputs | None
) -> Estimate | None:
    """The parent's estimate as this revision's, when the estimator's inputs did not change."""
    from hubwatch.estimator import ESTIMATOR_VERSION

    if estimate is None or estimate.estimator_version != ESTIMATOR_VERSION:
        return None
    if before is None:
        before = estimator_inputs(parent)
    if before is None or replace(before, revision=None) != replace(inputs, revision=None):
        return None
    # the one field that names the revision (None in a failed estimate, as estimating again gives)
    return estimate if estimate.revision is None else replace(estimate, revision=sha or None)


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
