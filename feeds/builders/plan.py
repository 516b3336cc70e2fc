"""`POST /api/v1/plan`: validate a pasted config (and settings) and run the estimator on it."""

from __future__ import annotations

from typing import Any

from hubwatch.feeds.errors import ApiError, bad_request

__all__ = ["plan_estimate"]

_KEYS = {"config", "settings", "manifest"}


def plan_estimate(body: Any) -> dict[str, Any]:
    """The estimator's analysis of `body["config"]`, plus memory when the estimator provides it.

    A config the estimator cannot read is a 400 whose message names the offending key."""
    if not isinstance(body, dict):
        raise bad_request("body must be a JSON object: {\"config\": {...}, \"settings\": {...}}")
    unknown = sorted(set(body) - _KEYS)
    if unknown:
        raise bad_request(f"{unknown[0]} is not a plan field (use config, settings, manifest)")
    config, settings, manifest = body.get("config"), body.get("settings"), body.get("manifest")
    if not isinstance(config, dict):
        raise bad_request("config must be a JSON object (the model's config.json)")
    if settings is not None and not isinstance(settings, dict):
        raise bad_request("settings must be a JSON object")
    if manifest is not None and not isinstance(manifest, dict):
        raise bad_request("manifest must be a JSON object (tensor name → {dtype, shape})")
    try:
        from hubwatch import estimator
    except ImportError as exc:  # pragma: no cover - the estimator ships with hubwatch
        raise ApiError(503, "unavailable", f"the estimator is not available: {exc}") from exc
    analyze = getattr(estimator, "analyze", None)
    if analyze is None:
        raise ApiError(503, "unavailable", "the estimator in this build has no analyze()")
    error_type: type[Exception] = getattr(estimator, "EstimatorError", ValueError)
    try:
        result: dict[str, Any] = dict(analyze(config).to_json())
        revision = getattr(estimator, "estimate_revision", None)
        if revision is not None:
            result["revision_estimate"] = dict(revision(config, manifest=manifest, settings=settings))
    except (error_type, ValueError, TypeError) as exc:
        raise bad_request(f"config: {exc}") from exc
    return result
