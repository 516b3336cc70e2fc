"""Prometheus text exposition (format 0.0.4) of the store's counts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["MetricsSnapshot", "prometheus_text"]


@dataclass(frozen=True)
class MetricsSnapshot:
    repos_by_state: Mapping[str, int]
    revisions: int
    advisories: int
    last_poll_age_s: float | None  # None: nothing polled yet


def _metric(lines: list[str], name: str, help_text: str, samples: list[tuple[str, float]]) -> None:
    lines.append(f"# HELP {name} {help_text}")
    lines.append(f"# TYPE {name} gauge")
    for labels, value in samples:
        lines.append(f"{name}{labels} {value:g}")


def prometheus_text(snapshot: MetricsSnapshot) -> str:
    lines: list[str] = []
    _metric(lines, "hubwatch_watched_repos", "Repos being watched.",
            [("", float(sum(snapshot.repos_by_state.values())))])
    _metric(lines, "hubwatch_repos_by_state", "Watched repos by poll state.",
            [(f'{{state="{state}"}}', float(n)) for state, n in sorted(snapshot.repos_by_state.items())])
    _metric(lines, "hubwatch_revisions", "Revisions stored.", [("", float(snapshot.revisions))])
    _metric(lines, "hubwatch_advisories", "OSV advisories stored (withdrawn ones included).",
            [("", float(snapshot.advisories))])
    if snapshot.last_poll_age_s is not None:
        _metric(lines, "hubwatch_last_poll_age_seconds", "Seconds since the most recent poll of any repo.",
                [("", round(snapshot.last_poll_age_s, 3))])
    return "\n".join(lines) + "\n"
