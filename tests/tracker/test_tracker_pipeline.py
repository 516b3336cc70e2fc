"""The revision pipeline on weights, pickles and rewritten history (emulator + real store)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from hubwatch.settings import Settings
from hubwatch.domain.records import Kind, RepoId, Severity
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.pipeline import load_baseline
from hubwatch.tracker.poller import NewRevisions, poll_repos

TINY = RepoId.parse("hubsim-test/tiny-llama")


def hub_for(sim: Any) -> tuple[HubClient, Settings]:
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url)
    return HubClient.from_settings(settings), settings


def test_weights_dtype_and_pickle_changes_with_stored_headers(hubsim_factory: Any, store: Any, data_dir: Path) -> None:
    sim = hubsim_factory(root=data_dir / "hubsim", at=None)
    hub, settings = hub_for(sim)
    store.watch(TINY)
    (outcome,) = poll_repos([TINY], hub=hub, store=store, settings=settings)
    assert isinstance(outcome, NewRevisions) and len(outcome.shas) == 3
    v1, v2, v3 = store.history(TINY)
    assert {Kind.DTYPE, Kind.WEIGHTS, Kind.LICENSE} <= {c.kind for c in v2.changes}
    assert {Kind.PICKLE, Kind.CHAT_TEMPLATE} <= {c.kind for c in v3.changes}
    assert v2.advisory_ids and v3.advisory_ids
    # The safetensors headers come back from the store exactly as read from the hub.
    for entry in (v1, v2, v3):
        stored = load_baseline(store, TINY, entry.revision.sha).snapshot
        fresh = hub.snapshot(TINY, entry.revision.sha)
        assert {k: dict(v) for k, v in stored.safetensors.items()} == {k: dict(v) for k, v in fresh.safetensors.items()}
        assert dict(stored.contents) == dict(fresh.contents)
        assert set(stored.files) == set(fresh.files)
    assert v1.estimate is not None and v1.estimate["params"]["checkpoint"] is not None


def test_a_rewritten_history_is_itself_a_change(hubsim_factory: Any, store: Any, data_dir: Path, tmp_path: Path) -> None:
    repo = RepoId.parse("Qwen/Qwen-7B")
    before = tmp_path / "before"
    shutil.copytree(data_dir / "histories" / "Qwen__Qwen-7B", before / "Qwen__Qwen-7B")
    sim = hubsim_factory(root=before, at=None)
    hub, settings = hub_for(sim)
    store.watch(repo)
    poll_repos([repo], hub=hub, store=store, settings=settings)
    old = [e.revision.sha for e in store.history(repo)]
    sim.stop()

    # Upstream force-pushes: v2 and v3 are replaced by one different commit on top of v1.
    after = tmp_path / "after" / "Qwen__Qwen-7B"
    shutil.copytree(before / "Qwen__Qwen-7B", after)
    shutil.rmtree(after / "v2")
    shutil.rmtree(after / "v3")
    shutil.copytree(before / "Qwen__Qwen-7B" / "v3", after / "v2")
    rows = (after / "HISTORY.tsv").read_text().splitlines()
    (after / "HISTORY.tsv").write_text("\n".join([rows[0], rows[1], "v2\t2023-12-01\t" + "ab" * 20 + "\tsquash"]) + "\n")
    sim2 = hubsim_factory(root=after.parent, at=None)
    hub2, settings2 = hub_for(sim2)
    (outcome,) = poll_repos([repo], hub=hub2, store=store, settings=settings2)
    assert isinstance(outcome, NewRevisions) and outcome.shas == ("ab" * 20,)
    entry = store.revision(repo, "ab" * 20)
    assert entry is not None and entry.revision.parent == old[0]
    rewrite = [c for c in entry.changes if c.detail.get("history_rewrite")]
    assert len(rewrite) == 1 and "2 earlier revisions" in rewrite[0].summary
    assert rewrite[0].detail["old"] == old[1:]
    assert {Kind.CONTEXT} <= {c.kind for c in entry.changes}  # compared with v1, its real parent


def test_a_force_push_is_recorded_never_advised(hubsim_factory: Any, store: Any, data_dir: Path, tmp_path: Path) -> None:
    """Issue 9: the rewritten commit used to carry the rewrite into an advisory whose range marked
    revisions that never had any of it; now the rewrite is an info change and the rewrites table."""
    repo = RepoId.parse("Qwen/Qwen-7B")
    before = tmp_path / "before"
    shutil.copytree(data_dir / "histories" / "Qwen__Qwen-7B", before / "Qwen__Qwen-7B")
    sim = hubsim_factory(root=before, at=None)
    hub, settings = hub_for(sim)
    store.watch(repo)
    poll_repos([repo], hub=hub, store=store, settings=settings)
    old = [e.revision.sha for e in store.history(repo)]
    sim.stop()
    after = tmp_path / "after" / "Qwen__Qwen-7B"
    shutil.copytree(before / "Qwen__Qwen-7B", after)
    shutil.rmtree(after / "v3")
    shutil.copytree(before / "Qwen__Qwen-7B" / "v2", after / "v3")  # v3 replaced by a no-op commit
    rows = (after / "HISTORY.tsv").read_text().splitlines()
    (after / "HISTORY.tsv").write_text("\n".join([*rows[:3], "v3\t2023-12-01\t" + "ef" * 20 + "\tamend"]) + "\n")
    sim2 = hubsim_factory(root=after.parent, at=None)
    hub2, settings2 = hub_for(sim2)
    poll_repos([repo], hub=hub2, store=store, settings=settings2)
    entry = store.revision(repo, "ef" * 20)
    (rewrite,) = [c for c in entry.changes if c.detail.get("history_rewrite")]
    assert rewrite.severity is Severity.INFO and rewrite.detail["old"] == [old[2]]
    assert entry.advisory_ids == []  # the same content as its parent: nothing to advise
    assert len(store.revisions.rewrites(repo)) == 1
    for sha in old:  # no record of the rewritten commit affects any earlier revision
        assert not [a for a in store.advisories.affecting(repo, sha) if a.revision_sha == "ef" * 20]
