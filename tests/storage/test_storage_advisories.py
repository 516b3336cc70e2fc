"""Advisories: upsert by id, and OSV GIT-range semantics over the stored linear history."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa
from hubwatch.storage import Store
from hubwatch.domain.records import FileRecord, RepoId
from storage_helpers import T0, advisory, change, rev, sha

REPO = RepoId("org", "model")
CHAIN = ["r0", "r1", "r2", "r3", "r4", "r5"]


def build_history(store: Store, repo: RepoId = REPO, labels: list[str] = CHAIN) -> None:
    for i, label in enumerate(labels):
        parent = labels[i - 1] if i else None
        assert store.save_revision(
            repo,
            rev(label, parent, day=i),
            [FileRecord("config.json", 2)],
            {"config.json": b"{}"},
            [change()],
            None,
            [],
        )


def add(store: Store, label: str, parent: str, *advisories: object) -> None:
    assert store.save_revision(REPO, rev(label, parent, day=10), [], {}, [], None, list(advisories))  # type: ignore[arg-type]


def affected_ids(store: Store, label: str, repo: RepoId = REPO) -> list[str]:
    return sorted(a.id for a in store.advisories.affecting(repo, sha(label)))


def test_risk_advisory_affects_the_revision_onward(store: Store) -> None:
    build_history(store, labels=CHAIN[:3])
    add(store, "r3", "r2", advisory(REPO, "x_HW-1", "r3", [{"introduced": sha("r3")}]))
    build_history_tail(store, ["r4", "r5"], "r3")
    assert [affected_ids(store, x) for x in CHAIN] == [[], [], [], ["x_HW-1"], ["x_HW-1"], ["x_HW-1"]]


def build_history_tail(store: Store, labels: list[str], parent: str) -> None:
    for label in labels:
        assert store.save_revision(REPO, rev(label, parent, day=20), [], {}, [], None, [])
        parent = label


def test_fix_advisory_affects_the_revisions_before(store: Store) -> None:
    build_history(store, labels=CHAIN[:3])
    add(store, "r3", "r2", advisory(REPO, "x_HW-2", "r3", [{"introduced": "0"}, {"fixed": sha("r3")}]))
    build_history_tail(store, ["r4"], "r3")
    assert [affected_ids(store, x) for x in CHAIN[:5]] == [["x_HW-2"]] * 3 + [[], []]


def test_a_revert_adds_fixed_to_the_earlier_record(store: Store) -> None:
    build_history(store, labels=CHAIN[:2])
    risky = advisory(REPO, "x_HW-3", "r2", [{"introduced": sha("r2")}])
    add(store, "r2", "r1", risky)
    assert store.save_revision(REPO, rev("r3", "r2", day=11), [], {}, [], None, [])
    later = T0 + timedelta(days=30)
    reverted = advisory(REPO, "x_HW-3", "r2", [{"introduced": sha("r2")}, {"fixed": sha("r4")}], modified=later)
    add(store, "r4", "r3", reverted)
    stored = store.advisories.get("x_HW-3")
    assert stored is not None
    assert stored.modified == later and stored.revision_sha == sha("r2")  # raised-for revision kept
    assert stored.osv["affected"][0]["ranges"][0]["events"][1] == {"fixed": sha("r4")}
    assert [a.id for a in store.advisories.records(REPO)] == ["x_HW-3"]
    assert [affected_ids(store, x) for x in ["r1", "r2", "r3", "r4"]] == [[], ["x_HW-3"], ["x_HW-3"], []]
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM advisories")).scalar_one() == 1
        assert conn.execute(sa.text("SELECT count(*) FROM advisory_events")).scalar_one() == 2
    # An older copy arriving late (a slow second worker) does not roll the record back.
    assert store.save_revision(REPO, rev("r5", "r4", day=12), [], {}, [], None, [risky])
    assert store.advisories.get("x_HW-3").modified == later  # type: ignore[union-attr]
    assert affected_ids(store, "r4") == []


def test_withdrawn_advisories_are_excluded(store: Store) -> None:
    build_history(store, labels=CHAIN[:2])
    add(
        store,
        "r2",
        "r1",
        advisory(REPO, "x_HW-4", "r2", [{"introduced": "0"}]),
        advisory(REPO, "x_HW-5", "r2", [{"introduced": "0"}], withdrawn=T0 + timedelta(days=2)),
    )
    assert affected_ids(store, "r1") == ["x_HW-4"]
    assert {a.id: a.withdrawn for a in store.advisories.records()} == {"x_HW-4": None, "x_HW-5": T0 + timedelta(days=2)}
    assert store.advisories.live_count(REPO) == 1 and store.advisories.live_ids(REPO) == ["x_HW-4"]
    assert store.advisories.live_count(RepoId("org", "unknown")) == 0


def test_last_affected_and_limit(store: Store) -> None:
    build_history(store, labels=CHAIN[:3])
    add(
        store,
        "r3",
        "r2",
        advisory(REPO, "x_HW-6", "r3", [{"introduced": sha("r1")}, {"last_affected": sha("r2")}]),
        advisory(REPO, "x_HW-7", "r3", [{"introduced": "0"}, {"limit": sha("r2")}]),
    )
    assert [affected_ids(store, x) for x in CHAIN[:4]] == [["x_HW-7"], ["x_HW-6", "x_HW-7"], ["x_HW-6"], []]


def test_unknown_pins_and_prefixes(store: Store) -> None:
    build_history(store, labels=CHAIN[:2])
    add(store, "r2", "r1", advisory(REPO, "x_HW-8", "r2", [{"introduced": "0"}]))
    assert [a.id for a in store.advisories.affecting(REPO, sha("r0")[:8])] == ["x_HW-8"]
    assert store.advisories.affecting(REPO, sha("never")) == []
    assert store.advisories.affecting(RepoId("no", "such"), sha("r0")) == []


def test_advisories_for_commit_across_repos(store: Store) -> None:
    mirror = RepoId("mirror", "model")
    build_history(store, labels=CHAIN[:2])
    build_history(store, mirror, CHAIN[:2])  # same commits in a second repo
    add(store, "r2", "r1", advisory(REPO, "x_HW-9", "r2", [{"introduced": "0"}, {"fixed": sha("r2")}]))
    found = store.advisories.for_commit(sha("r1"))
    assert [(repo, a.id) for repo, a in found] == [(REPO, "x_HW-9")]
    assert store.advisories.for_commit(sha("r2")) == []
    assert store.advisories.for_commit(sha("elsewhere")) == []
