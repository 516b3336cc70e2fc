"""Prometheus text exposition (format 0.0.4) of the store's counts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["MetricsSnapshot", "prometheus_text"]


@dataclass(frozen=True)
class MetricsSnapshot:
    repos_by_state: Mapping[str, int]
    revisions: int
    advisories: int
    last_poll_age_s: float | None  # None: nothing polled yet
    # Poll telemetry (`poll_cycles`): totals over all cycles, and the latest cycle.
    cycles: int = 0
    cycle_sums: Mapping[str, int] = field(default_factory=dict)
    last_cycle_duration_s: float | None = None
    last_cycle_lag_max_s: float | None = None
    last_cycle_lag_mean_s: float | None = None
    last_cycle_listings: Mapping[str, str] = field(default_factory=dict)  # repo type → ok, busy, failed, none
    notifications: Mapping[str, int] = field(default_factory=dict)  # outbox rows by state (hubwatch notify)
    # This web process's request coalescing (feeds/coalesce.py): runs others could join, answers copied.
    reads_led: int = 0
    reads_shared: int = 0


def _metric(
    lines: list[str], name: str, help_text: str, samples: list[tuple[str, float]], kind: str = "gauge"
) -> None:
    lines.append(f"# HELP {name} {help_text}")
    lines.append(f"# TYPE {name} {kind}")
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
    _cycle_metrics(lines, snapshot)
    if snapshot.notifications:
        _metric(lines, "hubwatch_notifications", "Notification messages by state (failed: pending, retrying).",
                [(f'{{state="{k}"}}', float(v)) for k, v in sorted(snapshot.notifications.items())])
    _metric(lines, "hubwatch_web_reads_run_total",
            "GET answers this web process computed while identical requests could join them.",
            [("", float(snapshot.reads_led))], "counter")
    _metric(lines, "hubwatch_web_reads_shared_total",
            "GET answers this web process copied from an identical request's run in flight (coalescing).",
            [("", float(snapshot.reads_shared))], "counter")
    return "\n".join(lines) + "\n"


def _cycle_metrics(lines: list[str], snapshot: MetricsSnapshot) -> None:
    sums = snapshot.cycle_sums
    _metric(lines, "hubwatch_poll_cycles_total", "Poll cycles run (all workers).", [("", float(snapshot.cycles))],
            "counter")
    statuses = [("ok", "requests_ok"), ("3xx", "requests_3xx"), ("4xx", "requests_4xx"), ("429", "requests_429"),
                ("5xx", "requests_5xx"), ("failed", "requests_failed")]
    _metric(lines, "hubwatch_hub_requests_total",
            "Hub requests sent by poll cycles, by the status class of their answer (failed: no answer).",
            [(f'{{status="{label}"}}', float(sums.get(key, 0))) for label, key in statuses], "counter")
    for key, help_text in (
        ("repos", "Repo polls run by poll cycles."),
        ("new_revisions", "Revisions stored by poll cycles."),
        ("failures", "Repo polls that failed."),
        ("rate_limited", "Rate-limit waits: 429 answers and repos deferred for Retry-After."),
    ):
        _metric(lines, f"hubwatch_poll_{key}_total", help_text, [("", float(sums.get(key, 0)))], "counter")
    for name, value, help_text in (
        ("hubwatch_last_cycle_duration_seconds", snapshot.last_cycle_duration_s, "Duration of the latest poll cycle."),
        ("hubwatch_last_cycle_lag_max_seconds", snapshot.last_cycle_lag_max_s,
         "Latest cycle with new revisions: largest time from upstream commit to stored revision."),
        ("hubwatch_last_cycle_lag_mean_seconds", snapshot.last_cycle_lag_mean_s,
         "Latest cycle with new revisions: mean time from upstream commit to stored revision."),
    ):
        if value is not None:
            _metric(lines, name, help_text, [("", round(value, 3))])
    if snapshot.last_cycle_listings:
        _metric(lines, "hubwatch_last_cycle_listing",
                "Latest poll cycle: how each repo type's recently-modified listing went (ok, busy, failed; "
                "none: not read, no repo of the type watched or a webhook's poll).",
                [(f'{{type="{t}",outcome="{o}"}}', 1.0) for t, o in sorted(snapshot.last_cycle_listings.items())])
