"""A force-push that only removes commits is recorded as a history rewrite (DESIGN: a history
rewrite is itself a change), once, and the repo's head follows it back."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import feedparser
from fastapi.testclient import TestClient

from tracker_polling import poll_once

from hubwatch.feeds import create_app
from hubwatch.settings import Settings
from hubwatch.domain.records import RepoId
from hubwatch.tracker.poller import NewRevisions, Unchanged

QWEN = RepoId.parse("Qwen/Qwen-7B")


def poll(sim: Any, store: Any) -> Any:
    return poll_once(sim, store, QWEN)


def test_a_push_that_only_removes_commits_is_recorded(
    hubsim_factory: Any, store: Any, data_dir: Path, tmp_path: Path
) -> None:
    before = tmp_path / "before" / "Qwen__Qwen-7B"
    shutil.copytree(data_dir / "histories" / "Qwen__Qwen-7B", before)
    sim = hubsim_factory(root=before.parent, at=None)
    store.watch(QWEN)
    assert isinstance(poll(sim, store), NewRevisions)
    v1, v2, v3 = (e.revision.sha for e in store.history(QWEN))
    sim.stop()

    # Upstream force-pushes the main branch back to v1: v2 and v3 are gone, nothing new.
    after = tmp_path / "after" / "Qwen__Qwen-7B"
    shutil.copytree(before, after)
    shutil.rmtree(after / "v2")
    shutil.rmtree(after / "v3")
    sim2 = hubsim_factory(root=after.parent, at=None)
    outcome = poll(sim2, store)
    assert isinstance(outcome, Unchanged) and outcome.head == v1 and outcome.rewritten == (v2, v3)
    (rewrite,) = store.revisions.rewrites(QWEN)
    assert (rewrite.old_head, rewrite.new_head, rewrite.dropped) == (v3, v1, (v2, v3))
    assert store.head(QWEN).sha == v1
    assert store.repo_state(QWEN).head_sha == v1
    assert [e.revision.sha for e in store.history(QWEN)] == [v1, v2, v3]  # nothing stored is lost

    # Polling again: head unchanged, nothing recorded twice.
    again = poll(sim2, store)
    assert isinstance(again, Unchanged) and again.rewritten == ()
    assert len(store.revisions.rewrites(QWEN)) == 1

    # The model page says so and marks the dropped revisions.
    app = create_app(Settings(database_url="sqlite://", public_url="https://hw.example"), store)
    with TestClient(app) as client:
        html = client.get(f"/models/{QWEN}").text
        feeds = [feedparser.parse(client.get(path).content) for path in (
            f"/models/{QWEN}/feed.atom", "/orgs/Qwen/feed.rss", "/feed.atom", "/feed.atom?min_severity=medium")]
        filtered = feedparser.parse(client.get("/feed.atom?kind=context").content)
    assert "History rewritten upstream" in html and f'href="#r-{v2}"' in html
    assert html.count("not on the main branch (force-push)") == 2
    # Feed readers hear of it too: one entry, newest first, with a permanent id.
    for feed in feeds:
        top = feed.entries[0]
        assert "history rewritten: 2 stored revisions no longer on the main branch" in top.title
        assert top.id == f"tag:hubwatch,{rewrite.detected_at:%Y-%m-%d}:{QWEN}/rewrite/{v3}..{v1}"
        assert sum("history rewritten" in e.title for e in feed.entries) == 1
    assert not any("history rewritten" in e.title for e in filtered.entries)
    assert store.revisions.off_main_branch(QWEN) == {v2, v3}
    sim2.stop()

    # Upstream pushes v2 and v3 back: the head follows, nothing is stored twice, none is "dropped".
    sim3 = hubsim_factory(root=before.parent, at=None)
    restored = poll(sim3, store)
    assert isinstance(restored, Unchanged) and restored.head == v3 and restored.rewritten == ()
    assert store.head(QWEN).sha == v3 and store.revisions.off_main_branch(QWEN) == set()
    assert len(store.history(QWEN)) == 3 and len(store.revisions.rewrites(QWEN)) == 1
    assert isinstance(poll(sim3, store), Unchanged)
    # ...and that is recorded once as a restore, which the page and the feeds show after the rewrite.
    (restore,) = store.revisions.restores(QWEN)
    assert (restore.old_head, restore.new_head, restore.restored) == (v1, v3, (v2, v3))
    with TestClient(app) as client:
        html = client.get(f"/models/{QWEN}").text
        feeds = [feedparser.parse(client.get(path).content) for path in (
            f"/models/{QWEN}/feed.atom", "/orgs/Qwen/feed.rss", "/feed.atom", "/feed.atom?min_severity=medium")]
        filtered = feedparser.parse(client.get("/feed.atom?kind=context").content)
    assert "not on the main branch (force-push)" not in html
    told = html.index("pushed back from")
    assert told < html.index("force-push from")  # newest first
    assert f'<code>{v1[:7]}</code> onto <code>{v3[:7]}</code>; 2 stored revisions back on the main branch' in html
    for feed in feeds:
        top = feed.entries[0]
        assert "history restored: 2 stored revisions back on the main branch" in top.title
        assert top.id == f"tag:hubwatch,{restore.detected_at:%Y-%m-%d}:{QWEN}/restore/{v1}..{v3}"
        assert sum("history restored" in e.title for e in feed.entries) == 1
        assert sum("history rewritten" in e.title for e in feed.entries) == 1
    assert not any("history restored" in e.title for e in filtered.entries)


def test_a_new_commit_after_the_rewrite_is_diffed_against_its_parent(
    hubsim_factory: Any, store: Any, data_dir: Path, tmp_path: Path
) -> None:
    source = data_dir / "histories" / "Qwen__Qwen-7B"
    sim = hubsim_factory(root=_root_with(tmp_path / "a", source, ["v1", "v2"]), at=None)
    store.watch(QWEN)
    poll(sim, store)
    v1, v2 = (e.revision.sha for e in store.history(QWEN))
    sim.stop()
    sim2 = hubsim_factory(root=_root_with(tmp_path / "b", source, ["v1"]), at=None)
    assert poll(sim2, store).rewritten == (v2,)
    sim2.stop()
    # Then a different commit lands on top of v1 (v3's content under a new sha).
    root = _root_with(tmp_path / "c", source, ["v1", "v3"])
    history = root / "Qwen__Qwen-7B" / "HISTORY.tsv"
    rows = history.read_text().splitlines()
    history.write_text("\n".join([rows[0], rows[1], "v2\t2023-12-02\t" + "cd" * 20 + "\tcontext"]) + "\n")
    sim3 = hubsim_factory(root=root, at=None)
    outcome = poll(sim3, store)
    assert isinstance(outcome, NewRevisions) and outcome.shas == ("cd" * 20,)
    entry = store.revision(QWEN, "cd" * 20)
    assert entry.revision.parent == v1
    assert not any(c.detail.get("history_rewrite") for c in entry.changes)  # already recorded
    assert store.head(QWEN).sha == "cd" * 20 and len(store.revisions.rewrites(QWEN)) == 1


def _root_with(root: Path, source: Path, versions: list[str]) -> Path:
    """A root holding `source` with only `versions` (renumbered v1, v2, … in that order)."""
    folder = root / source.name
    folder.mkdir(parents=True)
    rows = (source / "HISTORY.tsv").read_text().splitlines()
    by_version = {r.split("\t")[0]: r for r in rows[1:]}
    out = [rows[0]]
    for i, version in enumerate(versions, start=1):
        shutil.copytree(source / version, folder / f"v{i}")
        out.append(f"v{i}\t" + by_version[version].split("\t", 1)[1])
    (folder / "HISTORY.tsv").write_text("\n".join(out) + "\n")
    return root
