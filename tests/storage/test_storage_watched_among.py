"""store.repos.watched_among / mark_due: the states of a given set of repos (batched IN-lists) and
making the watched ones among them due, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from hubwatch.storage.repos import repos as repos_mod
from hubwatch.domain.records import RepoId

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_watched_among_returns_only_watched_repos_asked_about(store: Any) -> None:
    a, b, c, d = (RepoId.parse(n) for n in ("org/a", "org/b", "other/c", "org/d"))
    for repo in (a, b, c):
        store.watch(repo)
    store.unwatch(b)
    store.repos.record_poll(a, "ok", None, T0)
    found = store.repos.watched_among([a, b, d, a])  # b unwatched, d unknown, a twice
    assert [s.repo for s in found] == [a]
    assert found[0].state == "ok" and found[0].last_polled_at.replace(tzinfo=timezone.utc) == T0
    assert store.repos.watched_among([]) == []
    assert [s.repo for s in store.repos.watched_among(iter([c, a]))] == [a, c]  # org/name order


def test_watched_among_spans_several_batches(store: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(repos_mod, "BATCH", 3)  # the batch size only; the queries are real
    names = [RepoId("org", f"m{i:02d}") for i in range(10)]
    for repo in names[::2]:
        store.watch(repo)
    assert [s.repo for s in store.repos.watched_among(names)] == names[::2]


def test_mark_due_makes_watched_repos_claimable(store: Any) -> None:
    a, b, c = (RepoId.parse(n) for n in ("org/a", "org/b", "org/c"))
    for repo in (a, b, c):
        store.watch(repo)
    assert sorted(map(str, store.leases.claim_due("w", T0, 10, 60))) == ["org/a", "org/b", "org/c"]
    for repo in (a, b, c):
        assert store.leases.release(repo, "w", T0 + timedelta(hours=6))
    now = T0 + timedelta(minutes=5)
    assert store.leases.claim_due("w", now, 10, 60) == []
    store.unwatch(c)
    assert store.repos.mark_due([a, c, RepoId.parse("org/unknown")], now) == 1
    assert store.repos.mark_due([a], now) == 0  # already due
    assert store.leases.claim_due("w", now, 10, 60) == [a]
    assert store.repo_state(b).next_poll_at.replace(tzinfo=timezone.utc) == T0 + timedelta(hours=6)
