"""shields.io endpoint badges (https://shields.io/badges/endpoint-badge): only the keys it accepts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hubwatch.advisories.standing import Standing, advisory_severity
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


def model_badge(latest_changes: Sequence[ChangeRecord] | None, live_advisories: int) -> dict[str, Any]:
    """Latest change's severity and the repo's count of advisories not withdrawn. `None`: nothing recorded yet."""
    if latest_changes is None:
        return badge("hubwatch", "no revisions yet", "lightgrey")
    if not latest_changes:
        return badge("hubwatch", f"latest: no change · {_advisory_text(live_advisories)}", "green")
    worst = max(latest_changes, key=lambda c: c.severity.rank).severity
    return badge("hubwatch", f"latest: {worst.value} · {_advisory_text(live_advisories)}", severity_color(worst))


def _advisory_text(n: int) -> str:
    return "1 advisory" if n == 1 else f"{n} advisories"


def pin_badge(result: Standing, min_severity: Severity) -> dict[str, Any]:
    """'Is my pin affected', as the standing says: the open hazards a revision carries and the updates a
    pin there lacks, at or above `min_severity` (a record without a recorded severity always counts);
    acknowledged ids (`?ignore=`) do not count. A commit off the main line says so (orange when clean)."""
    label = f"hubwatch {result.commit[:7]}"
    if not result.known:
        return badge(label, "unknown revision", "lightgrey")
    carries = _at_least(result.open_hazards(), min_severity)
    lacks = _at_least([a for a in result.lacks if a.id not in result.ignored], min_severity)
    # A commit a force-push or squash dropped may stop being served: never "up to date", however clean.
    dropped = [] if result.on_main_line else ["off the main line"]
    if not carries and not lacks:
        return badge(label, dropped[0], "orange") if dropped else badge(label, "up to date", "brightgreen")
    parts = []
    if carries:
        parts.append("1 hazard" if len(carries) == 1 else f"{len(carries)} hazards")
    if lacks:
        parts.append("lacks 1 update" if len(lacks) == 1 else f"lacks {len(lacks)} updates")
    severities = [s for a in carries + lacks if (s := advisory_severity(a)) is not None]
    worst = max(severities, key=lambda s: s.rank) if severities else None
    suffix = f" ≥ {min_severity.value}" if min_severity is not Severity.INFO else ""
    return badge(label, " · ".join(parts) + suffix + "".join(f" · {d}" for d in dropped), severity_color(worst))


def _at_least(records: Sequence[AdvisoryRecord], floor: Severity) -> list[AdvisoryRecord]:
    return [a for a in records if (s := advisory_severity(a)) is None or s.rank >= floor.rank]
