"""Aggregate reads: counts, a page of the watch list, the latest change of many repos — each a
fixed number of queries however many repos are tracked (design target: 100k repos)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hubwatch.storage import InvalidRecord, Store
from hubwatch.domain.records import Kind, RepoId, Severity
from storage_helpers import T0, advisory, change, rev, sha


def fill(store: Store, n: int) -> list[RepoId]:
    """n repos in two orgs; repo i has i % 3 + 1 revisions, the newest with a change (except i=0)."""
    repos = []
    for i in range(n):
        repo = RepoId("org-a" if i % 2 == 0 else "org-b", f"model-{i:03d}")
        repos.append(repo)
        store.watch(repo)
        parent = None
        for j in range(i % 3 + 1):
            label = f"{repo}-{j}"
            changes = [change(Kind.CONTEXT, Severity.MEDIUM)] if i and j == i % 3 else []
            advisories = [advisory(repo, f"x_HW-{i}-{j}", label, [{"introduced": sha(label)}])] if changes else []
            assert store.save_revision(repo, rev(label, parent, day=j), [], {}, changes, None, advisories)
            parent = label
        store.repos.record_poll(repo, "error" if i == 3 else "ok", "boom" if i == 3 else None, T0 + timedelta(hours=i))
    return repos


def test_stats_are_aggregates(store: Store, count_selects) -> None:  # type: ignore[no-untyped-def]
    assert store.repos.stats().watched == 0 and store.repos.stats().last_polled_at is None
    repos = fill(store, 7)
    store.unwatch(repos[6])  # unwatched: not counted among watched repos; its rows still count
    stats = store.repos.stats()
    assert stats.repos_by_state == {"ok": 5, "error": 1}
    assert stats.watched == 6 == store.repos.watched_count() == len(store.repos.watched())
    assert stats.revisions == sum(i % 3 + 1 for i in range(7)) == sum(s.revision_count for s in store.repos.watched()) + 1
    assert stats.advisories == len(store.advisories.records()) == 6
    assert stats.last_polled_at == T0 + timedelta(hours=5)
    with count_selects(store) as seen:
        store.repos.stats()
    assert len(seen) <= 4 and not any("advisory_events" in s or "changes" in s for s in seen)


def test_watched_pages_and_orgs(store: Store) -> None:
    repos = fill(store, 9)
    everything = store.repos.watched()
    assert [s.repo for s in everything] == sorted(repos, key=lambda r: (r.org, r.name))
    pages = [store.repos.watched(offset=o, limit=4) for o in (0, 4, 8)]
    assert [len(p) for p in pages] == [4, 4, 1]
    assert [s for p in pages for s in p] == everything
    org_b = store.repos.watched(org="org-b")
    assert [s.repo.name for s in org_b] == ["model-001", "model-003", "model-005", "model-007"]
    assert [s.revision_count for s in org_b] == [2, 1, 3, 2]
    assert store.repos.watched(org="nobody") == []
    with pytest.raises(InvalidRecord, match="offset"):
        store.repos.watched(offset=-1)


def test_latest_changes_match_recent_changes_in_constant_queries(store: Store, count_selects) -> None:  # type: ignore[no-untyped-def]
    repos = fill(store, 9)
    latest = store.repos.latest_changes(repos)
    for repo in repos:
        one = store.repos.recent_changes(1, repo=repo)
        assert latest.get(repo) == (one[0] if one else None), repo
    assert repos[0] not in latest  # its only revision changed nothing
    assert store.repos.latest_changes([]) == {}
    assert store.repos.latest_changes([RepoId("nobody", "x")]) == {}
    with count_selects(store) as few:
        store.repos.latest_changes(repos[:2])
    with count_selects(store) as many:
        store.repos.latest_changes(repos)
    assert len(few) == len(many) <= 4
