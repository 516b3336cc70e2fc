"""Watch list, poll state, and sharing due repos among workers with leases."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import sqlalchemy as sa
from hubwatch.storage import InvalidRecord, Store
from hubwatch.domain.records import RepoId
from storage_helpers import T0

REPOS = [RepoId("org", f"m{i:02d}") for i in range(10)]


def test_watch_unwatch_and_the_watch_list(store: Store) -> None:
    assert store.watch(REPOS[1]) and store.watch(REPOS[0])
    assert not store.watch(REPOS[0])  # re-watching is a no-op
    states = store.repos.watched()
    assert [s.repo for s in states] == [REPOS[0], REPOS[1]]
    assert all(s.state == "new" and s.revision_count == 0 and s.head_sha is None for s in states)
    assert store.unwatch(REPOS[0]) and not store.unwatch(REPOS[0]) and not store.unwatch(REPOS[5])
    assert [s.repo for s in store.repos.watched()] == [REPOS[1]]
    assert store.repo_state(REPOS[0]) is not None and store.repo_state(REPOS[0]).watched is False  # type: ignore[union-attr]
    assert store.watch(REPOS[0])  # watching again brings it back
    assert len(store.repos.watched()) == 2


def test_record_poll_sets_state_and_counts_failures(store: Store) -> None:
    store.watch(REPOS[0])
    store.repos.record_poll(REPOS[0], "error", "hub answered 503", T0)
    store.repos.record_poll(REPOS[0], "error", "hub answered 503", T0 + timedelta(minutes=1))
    [s] = store.repos.watched()
    assert (s.state, s.last_error, s.failures, s.last_polled_at) == (
        "error",
        "hub answered 503",
        2,
        T0 + timedelta(minutes=1),
    )
    store.repos.record_poll(REPOS[0], "gated", None, T0 + timedelta(minutes=2), new_revisions=0)
    [s] = store.repos.watched()
    assert (s.state, s.last_error, s.failures) == ("gated", None, 3)  # gated backs off like an error
    with store.engine.connect() as conn:
        runs = conn.execute(sa.text("SELECT outcome, error FROM poll_runs ORDER BY id")).all()
    assert [tuple(r) for r in runs] == [("error", "hub answered 503")] * 2 + [("gated", None)]
    with pytest.raises(InvalidRecord, match="poll state"):
        store.repos.record_poll(REPOS[0], "fine", None, T0)


def test_two_workers_never_share_a_repo(store: Store) -> None:
    for repo in REPOS:
        store.watch(repo)
    a = store.leases.claim_due("worker-a", T0, 4, 60)
    b = store.leases.claim_due("worker-b", T0, 4, 60)
    c = store.leases.claim_due("worker-c", T0, 4, 60)
    assert len(a) == 4 and len(b) == 4 and len(c) == 2
    assert not set(a) & set(b) and not set(b) & set(c) and not set(a) & set(c)
    assert store.leases.claim_due("worker-d", T0 + timedelta(seconds=59), 10, 60) == []
    # Released repos come back when due; the others' leases expire and can be re-claimed.
    for repo in a:
        assert store.leases.release(repo, "worker-a", T0 + timedelta(seconds=300))
    assert not store.leases.release(b[0], "worker-a", None)  # not a's lease
    later = T0 + timedelta(seconds=61)
    reclaimed = store.leases.claim_due("worker-d", later, 10, 60)
    assert set(reclaimed) == set(b) | set(c)
    # A worker whose lease expired and was taken over cannot release or renew it any more.
    assert not store.leases.renew(b[0], "worker-b", later, 60)
    assert not store.leases.release(b[0], "worker-b", None)
    assert store.leases.renew(b[0], "worker-d", later + timedelta(seconds=30), 60)  # heartbeat: now until T0+151
    at_300 = store.leases.claim_due("worker-e", T0 + timedelta(seconds=300), 10, 60)
    assert set(at_300) == set(REPOS)  # a's repos are due again, d's leases expired
    states = {s.repo: s for s in store.repos.watched()}
    assert states[a[0]].lease_owner == "worker-e"
    assert states[a[0]].lease_expires_at == T0 + timedelta(seconds=360)


def test_due_order_and_unwatched_repos(store: Store) -> None:
    for repo in REPOS[:3]:
        store.watch(repo)
    store.unwatch(REPOS[2])
    [first] = store.leases.claim_due("w", T0, 1, 10)
    store.leases.release(first, "w", T0 + timedelta(hours=1))
    [second] = store.leases.claim_due("w", T0, 5, 10)
    assert second != first  # the not-yet-polled repo goes before the one scheduled later
    store.leases.release(second, "w", T0 - timedelta(hours=1))
    assert store.leases.claim_due("w", T0 + timedelta(minutes=1), 5, 10) == [second]
    # Two hours on, the lease on `second` has expired: both are due, the longest overdue first.
    assert store.leases.claim_due("w", T0 + timedelta(hours=2), 5, 10) == [second, first]


def test_concurrent_claims_from_many_threads(store: Store) -> None:
    for repo in REPOS:
        store.watch(repo)
    got: dict[str, list[RepoId]] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(5)

    def worker(name: str) -> None:
        try:
            barrier.wait()
            got[name] = store.leases.claim_due(name, T0, 3, 60)
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    claimed = [r for repos in got.values() for r in repos]
    assert len(claimed) == len(set(claimed)) == len(REPOS)


def test_lease_arguments_are_checked(store: Store) -> None:
    with pytest.raises(InvalidRecord):
        store.leases.claim_due("", T0, 1, 10)
    with pytest.raises(InvalidRecord):
        store.leases.claim_due("w", T0, 1, 0)
    with pytest.raises(InvalidRecord, match="time zone"):
        store.leases.claim_due("w", T0.replace(tzinfo=None), 1, 10)


def test_a_claim_in_flight_is_skipped_not_waited_for(store: Store) -> None:
    """Worker 1 has claimed but not committed. PostgreSQL: worker 2 skips the locked rows at once
    (SKIP LOCKED). SQLite: worker 2 waits for worker 1's write transaction. Never an overlap."""
    from hubwatch.storage.ops import leases
    from hubwatch.storage.core.engine import write_transaction

    for repo in REPOS:
        store.watch(repo)
    second: list[list[RepoId]] = []
    with write_transaction(store.engine) as conn:
        first = leases.claim_due(conn, "w1", T0, 3, 60)
        thread = threading.Thread(target=lambda: second.append(store.leases.claim_due("w2", T0, 10, 60)))
        thread.start()
        thread.join(5 if store.engine.dialect.name == "postgresql" else 0.5)
        if store.engine.dialect.name == "postgresql":
            assert not thread.is_alive()
            assert len(second[0]) == 7
        else:
            assert thread.is_alive()
    thread.join(30)
    assert len(first) == 3 and len(second[0]) == 7 and not set(first) & set(second[0])
