"""shields.io endpoint badges (https://shields.io/badges/endpoint-badge): only the keys it accepts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, Severity

__all__ = ["advisory_severity", "badge", "model_badge", "pin_badge", "severity_color"]

_COLORS = {
    Severity.CRITICAL: "critical",
    Severity.HIGH: "red",
    Severity.MEDIUM: "orange",
    Severity.LOW: "yellow",
    Severity.INFO: "blue",
}


def severity_color(severity: Severity | None) -> str:
    return _COLORS.get(severity, "lightgrey") if severity is not None else "lightgrey"


def badge(label: str, message: str, color: str, cache_seconds: int = 300) -> dict[str, Any]:
    """The endpoint JSON (schemaVersion, label, message, color, cacheSeconds — nothing else)."""
    return {
        "schemaVersion": 1,
        "label": label,
        "message": message or "none",
        "color": color,
        "cacheSeconds": cache_seconds,
    }


def advisory_severity(advisory: AdvisoryRecord) -> Severity | None:
    """The hubwatch severity recorded in an advisory's `database_specific`, when there is one."""
    specific = advisory.osv.get("database_specific")
    if not isinstance(specific, dict):
        return None
    candidates: list[Any] = [specific.get("max_severity"), specific.get("severity")]
    changes = specific.get("changes")
    if isinstance(changes, list):
        candidates += [c.get("severity") for c in changes if isinstance(c, dict)]
    found = [Severity(c) for c in candidates if c in Severity._value2member_map_]
    return max(found, key=lambda s: s.rank) if found else None


def model_badge(latest_changes: Sequence[ChangeRecord] | None, advisories: Sequence[AdvisoryRecord]) -> dict[str, Any]:
    """Latest change's severity and the repo's advisory count. `None`: nothing recorded yet."""
    live = [a for a in advisories if a.withdrawn is None]
    if latest_changes is None:
        return badge("hubwatch", "no revisions yet", "lightgrey")
    if not latest_changes:
        return badge("hubwatch", f"latest: no change · {_advisory_text(len(live))}", "green")
    worst = max(latest_changes, key=lambda c: c.severity.rank).severity
    return badge("hubwatch", f"latest: {worst.value} · {_advisory_text(len(live))}", severity_color(worst))


def _advisory_text(n: int) -> str:
    return "1 advisory" if n == 1 else f"{n} advisories"


def pin_badge(sha: str, affecting: Sequence[AdvisoryRecord], min_severity: Severity) -> dict[str, Any]:
    """'Is my pin affected': advisories affecting revision `sha` at or above `min_severity`
    (an advisory without a recorded severity always counts)."""
    counted = [
        a
        for a in affecting
        if a.withdrawn is None and ((s := advisory_severity(a)) is None or s.rank >= min_severity.rank)
    ]
    label = f"hubwatch {sha[:7]}"
    if not counted:
        return badge(label, "not affected", "brightgreen")
    severities = [s for a in counted if (s := advisory_severity(a)) is not None]
    worst = max(severities, key=lambda s: s.rank) if severities else None
    suffix = f" ≥ {min_severity.value}" if min_severity is not Severity.INFO else ""
    return badge(label, f"{_advisory_text(len(counted))}{suffix}", severity_color(worst))
