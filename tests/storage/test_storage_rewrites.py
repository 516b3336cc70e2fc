"""History rewrites: recorded once, validated, and the head follows a push back to a stored revision."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hubwatch.advisories.pin_standing import standing_at
from hubwatch.storage import InvalidRecord, Store
from hubwatch.domain.records import RepoId
from storage_helpers import T0, advisory, rev, sha

REPO = RepoId("acme", "rewritten")


def test_rewrite_recorded_once_and_head_follows(store: Store) -> None:
    for label, parent in (("a", None), ("b", "a"), ("c", "b")):
        assert store.save_revision(REPO, rev(label, parent), [], {}, [], None, [])
    assert store.head(REPO).sha == sha("c")
    assert store.revisions.record_rewrite(REPO, sha("c"), sha("a"), [sha("b"), sha("c")], T0)
    assert not store.revisions.record_rewrite(REPO, sha("c"), sha("a"), [sha("b"), sha("c")], T0 + timedelta(hours=1))
    (rewrite,) = store.revisions.rewrites(REPO)
    assert (rewrite.old_head, rewrite.new_head, rewrite.dropped, rewrite.detected_at) == (
        sha("c"), sha("a"), (sha("b"), sha("c")), T0)
    assert store.head(REPO).sha == sha("a") == store.repo_state(REPO).head_sha
    # A new commit on top of the rewritten branch is the head again.
    assert store.save_revision(REPO, rev("d", "a"), [], {}, [], None, [])
    assert store.head(REPO).sha == sha("d")
    # A rewrite to a head not stored yet (its commits come next) leaves the head alone.
    assert store.revisions.record_rewrite(REPO, sha("d"), sha("e"), [sha("d")], T0)
    assert store.head(REPO).sha == sha("d") and len(store.revisions.rewrites(REPO)) == 2
    assert store.revisions.rewrites(RepoId("acme", "unknown")) == []


def test_rewrite_input_is_checked(store: Store) -> None:
    with pytest.raises(InvalidRecord, match="new head"):
        store.revisions.record_rewrite(REPO, sha("a"), "main", [sha("a")], T0)
    with pytest.raises(InvalidRecord, match="at least one"):
        store.revisions.record_rewrite(REPO, sha("a"), sha("b"), [], T0)
    with pytest.raises(InvalidRecord, match="dropped revision"):
        store.revisions.record_rewrite(REPO, sha("a"), sha("b"), ["\x00"], T0)


def test_recent_rewrites_newest_first_by_repo_and_org(store: Store) -> None:
    other = RepoId("other", "model")
    for repo in (REPO, other):
        assert store.save_revision(repo, rev(f"{repo}-a"), [], {}, [], None, [])
    store.revisions.record_rewrite(REPO, sha("x"), sha(f"{REPO}-a"), [sha("x")], T0)
    store.revisions.record_rewrite(other, sha("y"), sha(f"{other}-a"), [sha("y")], T0 + timedelta(hours=2))
    store.revisions.record_rewrite(REPO, sha("z"), sha(f"{REPO}-a"), [sha("z")], T0 + timedelta(hours=1))
    assert [r.old_head for r in store.revisions.recent_rewrites(10)] == [sha("y"), sha("z"), sha("x")]
    assert [r.old_head for r in store.revisions.recent_rewrites(1)] == [sha("y")]
    assert [r.old_head for r in store.revisions.recent_rewrites(10, repo=REPO)] == [sha("z"), sha("x")]
    assert [r.repo for r in store.revisions.recent_rewrites(10, org="other")] == [other]
    assert store.revisions.recent_rewrites(0) == []


def test_move_head_and_what_is_off_the_main_branch(store: Store) -> None:
    for label, parent in (("a", None), ("b", "a"), ("c", "b")):
        assert store.save_revision(REPO, rev(label, parent), [], {}, [], None, [])
    assert store.revisions.off_main_branch(REPO) == set()
    store.revisions.record_rewrite(REPO, sha("c"), sha("a"), [sha("b"), sha("c")], T0)
    assert store.revisions.off_main_branch(REPO) == {sha("b"), sha("c")}
    assert not store.revisions.move_head(REPO, sha("nope")) and not store.revisions.move_head(REPO, sha("a"))  # unknown; already
    assert store.revisions.move_head(REPO, sha("c"))  # upstream pushed b and c back
    assert store.head(REPO).sha == sha("c") and store.revisions.off_main_branch(REPO) == set()
    # Kept per history version: each write that moves the line answers anew.
    assert store.save_revision(REPO, rev("d", "c"), [], {}, [], None, [])
    assert store.revisions.off_main_branch(REPO) == set()
    assert store.revisions.record_rewrite(REPO, sha("d"), sha("b"), [sha("c"), sha("d")], T0)
    assert store.revisions.off_main_branch(REPO) == {sha("c"), sha("d")}
    assert store.save_revision(REPO, rev("e", "b"), [], {}, [], None, [])  # on top of the new line
    assert store.head(REPO).sha == sha("e") and store.revisions.off_main_branch(REPO) == {sha("c"), sha("d")}
    assert store.revisions.move_head(REPO, sha("d"))  # upstream back on d: c and d are on the line again
    assert store.revisions.off_main_branch(REPO) == set()  # (e left it by no recorded rewrite: moving a head records none)


def test_the_same_rewrite_after_a_restore_moves_the_head_back_again(store: Store) -> None:
    """Upstream rewinds c → a, pushes c back, then rewinds c → a again: the head follows each time
    (the repeated-poll guard must not swallow the second rewind)."""
    for label, parent in (("a", None), ("b", "a"), ("c", "b")):
        assert store.save_revision(REPO, rev(label, parent), [], {}, [], None, [])
    assert store.revisions.record_rewrite(REPO, sha("c"), sha("a"), [sha("b"), sha("c")], T0)
    assert store.revisions.move_head(REPO, sha("c"), T0 + timedelta(hours=1))
    assert store.head(REPO).sha == sha("c") and store.revisions.off_main_branch(REPO) == set()
    assert store.revisions.record_rewrite(REPO, sha("c"), sha("a"), [sha("b"), sha("c")], T0 + timedelta(hours=2))
    assert store.head(REPO).sha == sha("a") and store.revisions.off_main_branch(REPO) == {sha("b"), sha("c")}
    assert not store.revisions.record_rewrite(REPO, sha("c"), sha("a"), [sha("b"), sha("c")], T0 + timedelta(hours=3))
    assert len(store.revisions.rewrites(REPO)) == 1  # listed once, the first time


def test_a_dropped_commits_standing_follows_later_writes(store: Store) -> None:
    """A commit off the main line is answered along its own line, kept per history version: asked
    again it reads nothing again, and a later revision or advisory is in the next answer."""
    for label, parent in (("a", None), ("b", "a")):
        assert store.save_revision(REPO, rev(label, parent), [], {}, [], None, [])
    first = advisory(REPO, "HW-first", "c", [{"introduced": sha("c")}])
    assert store.save_revision(REPO, rev("c", "b"), [], {}, [], None, [first])
    assert store.revisions.record_rewrite(REPO, sha("c"), sha("d"), [sha("c")], T0)  # before d is stored, as the tracker does
    assert store.save_revision(REPO, rev("d", "b"), [], {}, [], None, [])
    assert store.revisions.off_main_branch(REPO) == {sha("c")}

    def ids(commit: str) -> list[str]:
        found = standing_at(store, REPO, commit)
        assert found is not None and found.known
        return sorted(a.id for a in (*found.lacks, *found.carries))

    dropped = standing_at(store, REPO, sha("c"))
    assert dropped is not None and not dropped.on_main_line and dropped.suggested == sha("d")
    assert ids(sha("c")) == ids(sha("c")) == ["HW-first"]
    later = advisory(REPO, "HW-later", "e", [{"introduced": sha("a")}])  # holds from a on, on every line
    assert store.save_revision(REPO, rev("e", "d"), [], {}, [], None, [later])
    assert ids(sha("c")) == ["HW-first", "HW-later"] and ids(sha("e")) == ["HW-later"]
