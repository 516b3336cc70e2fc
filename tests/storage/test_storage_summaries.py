"""Per-repo summaries kept at write time: the revision count, and a history version that every
write changing the history or the advisories raises (what readers key derived results by)."""

from __future__ import annotations

from datetime import timedelta

from storage_helpers import T0, advisory, rev, sha

from hubwatch.domain.records import RepoId
from hubwatch.storage import Store

__all__: list[str] = []

REPO = RepoId("sum", "model")


def _version(store: Store) -> int:
    summary = store.summary(REPO)
    assert summary is not None
    return summary.version


def test_count_and_version_follow_every_write(store: Store) -> None:
    assert store.summary(REPO) is None and store.revisions.revision_count(REPO) == 0
    store.watch(REPO)
    assert store.summary(REPO) is not None and store.revisions.revision_count(REPO) == 0
    seen = [_version(store)]

    def moved() -> bool:
        seen.append(_version(store))
        return seen[-1] > seen[-2]

    assert store.save_revision(REPO, rev("a"), [], {}, [], None, [])
    assert moved() and store.revisions.revision_count(REPO) == 1
    hazard = advisory(REPO, "x_SUM-1", "b", [{"introduced": sha("b")}])
    assert store.save_revision(REPO, rev("b", "a", day=1), [], {}, [], None, [hazard])
    assert moved() and store.revisions.revision_count(REPO) == 2
    assert not store.save_revision(REPO, rev("b", "a", day=1), [], {}, [], None, [])  # already stored
    assert not moved() and store.revisions.revision_count(REPO) == 2
    # an advisory re-derived later (a newer `modified`), and one withdrawn
    newer = advisory(REPO, "x_SUM-1", "b", [{"introduced": sha("b")}, {"fixed": sha("b")}], T0 + timedelta(1))
    store.revisions.replace_derived(REPO, {}, [newer])
    assert moved()
    store.revisions.replace_derived(REPO, {}, [advisory(REPO, "x_SUM-1", "b", [], T0, withdrawn=T0)])  # older: kept
    assert not moved() and store.advisories.get("x_SUM-1") == newer
    assert store.revisions.save_estimate(REPO, sha("b"), "v2", {"params": {"derived": 5}})  # a re-estimate
    assert moved()
    assert store.revisions.record_rewrite(REPO, sha("b"), sha("a"), [sha("b")], T0)
    assert moved()
    assert store.revisions.move_head(REPO, sha("b"))
    assert moved()
    assert store.repos.rename_repo(REPO, RepoId("sum", "renamed"), T0)
    summary = store.summary(RepoId("sum", "renamed"))
    assert summary is not None and summary.version > seen[-1] and summary.revisions == 2
    assert store.summary(REPO) == summary  # the old id is an alias of the same row


def test_batched_upsert_keeps_each_records_events(store: Store) -> None:
    store.watch(REPO)
    store.save_revision(REPO, rev("a"), [], {}, [], None, [])
    records = [advisory(REPO, f"x_SUM-{i}", "b", [{"introduced": sha("b")}, {"fixed": sha(f"c{i}")}])
               for i in range(5)]  # fmt: skip
    assert store.save_revision(REPO, rev("b", "a", day=1), [], {}, [], None, records)
    assert store.advisories.by_id([r.id for r in records]) == records
    assert store.advisories.ids_affecting(REPO, sha("b")) == sorted(r.id for r in records)
    assert store.advisories.ids_affecting(REPO, sha("a")) == []
