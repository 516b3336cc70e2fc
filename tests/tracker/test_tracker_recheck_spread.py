"""Re-checks spread across the interval: repos released at one moment do not come due together."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

from hubwatch.domain.records import RepoId
from hubwatch.tracker.scheduler import RECHECK_SPREAD, recheck_at

__all__: list[str] = []

AT = datetime(2024, 1, 1, tzinfo=UTC)
INTERVAL = 21600


def test_a_thousand_repos_released_together_spread_over_the_window() -> None:
    repos = [RepoId.parse(f"org{i % 37}/model-{i}") for i in range(1000)]
    due = [recheck_at(repo, AT, INTERVAL) for repo in repos]
    low, high = AT + timedelta(seconds=INTERVAL * (1 - RECHECK_SPREAD)), AT + timedelta(seconds=INTERVAL)
    assert all(low <= when <= high for when in due)  # never later than the interval: the listing reaches back to it
    width = (high - low) / 10
    buckets = Counter(min(9, int((when - low) / width)) for when in due)
    assert len(buckets) == 10 and max(buckets.values()) < 150  # no tenth of the window holds over 15%


def test_the_offset_is_the_repos_own() -> None:
    repo = RepoId.parse("Meta-Llama/Llama-2-7b-hf")
    assert recheck_at(repo, AT, INTERVAL) == recheck_at(RepoId.parse("meta-llama/llama-2-7b-hf"), AT, INTERVAL)
    later = AT + timedelta(hours=1)
    assert recheck_at(repo, later, INTERVAL) - later == recheck_at(repo, AT, INTERVAL) - AT
