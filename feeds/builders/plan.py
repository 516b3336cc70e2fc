"""`POST /api/v1/plan`: validate a pasted config (and memory settings) and run the estimator on it."""

from __future__ import annotations

from typing import Any

from hubwatch.feeds.errors import bad_request

__all__ = ["plan_estimate"]

_KEYS = ("config", "settings")


def plan_estimate(body: Any) -> dict[str, Any]:
    """`analyze(config).to_json()` plus `"memory"`: the Estimate's memory report (per method, batch per card,
    cost) at the given settings. A config or setting the estimator rejects is a 400 naming the key."""
    from hubwatch.estimator import ConfigError, analyze
    from hubwatch.estimator.memory_report import estimate_revision
    from hubwatch.estimator.memory_settings import MemorySettings, MemorySettingsError

    if not isinstance(body, dict):
        raise bad_request('body must be a JSON object: {"config": {...}, "settings": {...}}')
    unknown = sorted(set(body) - set(_KEYS))
    if unknown:
        raise bad_request(f"{unknown[0]} is not a plan field (use {', '.join(_KEYS)})")
    config, raw_settings = body.get("config"), body.get("settings")
    if not isinstance(config, dict):
        raise bad_request("config must be a JSON object (the model's config.json)")
    if raw_settings is not None and not isinstance(raw_settings, dict):
        raise bad_request("settings must be a JSON object of memory settings (method, batch, seq_len, …)")
    try:
        settings = MemorySettings.from_json(raw_settings or {})
    except MemorySettingsError as exc:
        raise bad_request(f"settings.{exc}") from exc
    except TypeError as exc:  # a wrongly typed value the dataclass itself refuses
        raise bad_request(f"settings: {exc}") from exc
    try:
        analysis = analyze(config, seq_len=settings.resolved_seq_len(None))
        result = analysis.to_json()
        result["memory"] = estimate_revision(analysis.spec, settings).memory_json()
    except ConfigError as exc:
        raise bad_request(f"config.{exc}" if exc.key and exc.key != "config" else f"config: {exc.problem}") from exc
    except MemorySettingsError as exc:
        raise bad_request(f"settings.{exc}") from exc
    return result
