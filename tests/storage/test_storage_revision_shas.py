"""The main line of a repo's stored history (store.revisions.revision_shas): oldest → newest, force-pushed commits off it."""

from __future__ import annotations

from hubwatch.domain.records import RepoId
from hubwatch.storage import Store
from storage_helpers import T0, rev, sha

__all__: list[str] = []

REPO = RepoId("acme", "line")


def test_unknown_repo_and_empty_history(store: Store) -> None:
    assert store.revisions.revision_shas(REPO) is None
    store.watch(REPO)
    assert store.revisions.revision_shas(REPO) == []


def test_oldest_to_newest_by_parent_links(store: Store) -> None:
    for day, (label, parent) in enumerate((("a", None), ("b", "a"), ("c", "b"))):
        assert store.save_revision(REPO, rev(label, parent, day=day), [], {}, [], None, [])
    assert store.revisions.revision_shas(REPO) == [sha("a"), sha("b"), sha("c")]
    assert store.revisions.revision_shas(RepoId("acme", "other")) is None


def test_force_pushed_commits_leave_the_line(store: Store) -> None:
    for label, parent in (("a", None), ("b", "a"), ("c", "b")):
        assert store.save_revision(REPO, rev(label, parent), [], {}, [], None, [])
    store.revisions.record_rewrite(REPO, sha("c"), sha("a"), [sha("b"), sha("c")], T0)
    assert store.revisions.revision_shas(REPO) == [sha("a")]
    assert store.save_revision(REPO, rev("d", "a"), [], {}, [], None, [])
    assert store.revisions.revision_shas(REPO) == [sha("a"), sha("d")]


def test_tip_gives_that_revisions_ancestors_and_holders_are_found(store: Store) -> None:
    for label, parent in (("a", None), ("b", "a"), ("c", "b")):
        assert store.save_revision(REPO, rev(label, parent), [], {}, [], None, [])
    store.revisions.record_rewrite(REPO, sha("c"), sha("a"), [sha("b"), sha("c")], T0)
    assert store.revisions.revision_shas(REPO, tip=sha("c")) == [sha("a"), sha("b"), sha("c")]
    assert store.revisions.repos_holding(sha("b")) == [REPO] == store.revisions.repos_holding(sha("b")[:9])
    assert store.revisions.repos_holding("f" * 40) == [] and store.revisions.repos_holding("nothex") == []
