"""A revision whose estimator inputs did not change reuses its parent's estimate: what is stored is
exactly what estimating it again gives (every bundled history, through the emulator)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hubwatch.domain.records import RepoId
from hubwatch.settings import Settings
from hubwatch.tracker.estimating import estimate_snapshot
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.pipeline import load_baseline
from hubwatch.tracker.poller import NewRevisions, poll_repos

__all__: list[str] = []


def test_reused_estimates_equal_fresh_ones(hubsim_factory: Any, store: Any, histories_root: Path) -> None:
    sim = hubsim_factory(root=histories_root, at=None)
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url)
    hub = HubClient.from_settings(settings)
    repos = sorted(RepoId.parse(f.name.replace("__", "/")) for f in histories_root.iterdir()
                   if f.is_dir() and "__" in f.name and "gated" not in f.name)  # fmt: skip
    for repo in repos:
        store.watch(repo)
    outcomes = poll_repos(repos, hub=hub, store=store, settings=settings)
    assert all(isinstance(o, NewRevisions) for o in outcomes)
    checked = reused = 0
    for repo in repos:
        history = store.history(repo)
        for parent, entry in zip([None, *history], history):
            snapshot = load_baseline(store, repo, entry.revision.sha).snapshot
            fresh = estimate_snapshot(snapshot)
            assert (fresh.to_json() if fresh else None) == entry.estimate, (repo, entry.revision.sha)
            checked += 1
            if parent is not None and fresh is not None:
                before = load_baseline(store, repo, parent.revision.sha)
                again = estimate_snapshot(snapshot, previous=(before.snapshot, before.estimate))
                assert again is not None and again.to_json() == fresh.to_json()
                if before.estimate is not None and before.estimate.to_json() | {"revision": None} == (
                        fresh.to_json() | {"revision": None}):  # fmt: skip
                    reused += 1  # the same estimate but for the revision it names: reusable
    assert checked > 20 and reused > 5  # most commits of the histories change no config


def test_a_poll_parses_each_file_once_while_revisions_keep_it(
    hubsim_factory: Any, store: Any, histories_root: Path, monkeypatch: Any
) -> None:
    # The diff and the estimate read each JSON file of a revision from one parse, and the next
    # revision does not parse again the files it shares with its parent: one parse of a content
    # (under one set of limits) per run of consecutive revisions holding it, per repo.
    from collections import Counter

    from hubwatch.domain import parsed_json
    from hubwatch.domain.remote_data import load_remote_json

    sim = hubsim_factory(root=histories_root, at=None)
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url)
    hub = HubClient.from_settings(settings)
    repos = sorted(RepoId.parse(f.name.replace("__", "/")) for f in histories_root.iterdir()
                   if f.is_dir() and "__" in f.name and "gated" not in f.name)  # fmt: skip
    calls: Counter[tuple[bytes, bool, int | None]] = Counter()

    def counting(raw: bytes, *, reject_constants: bool = False, max_values: int | None = None) -> Any:
        calls[(raw, reject_constants, max_values)] += 1
        return load_remote_json(raw, reject_constants=reject_constants, max_values=max_values)

    monkeypatch.setattr(parsed_json, "load_remote_json", counting)
    shared = 0
    for repo in repos:
        store.watch(repo)
        calls.clear()
        assert isinstance(poll_repos([repo], hub=hub, store=store, settings=settings)[0], NewRevisions)
        runs: Counter[bytes] = Counter()
        before: set[bytes] = set()
        for entry in store.history(repo):
            held = set(load_baseline(store, repo, entry.revision.sha).snapshot.contents.values())
            runs.update(held - before)  # a run of revisions holding the content begins here
            shared += len(held & before)
            before = held
        for (raw, _, _), parses in calls.items():
            if len(raw) <= parsed_json.MAX_MEMO_BYTES:
                assert parses <= runs[raw], (repo, raw[:80], parses, runs[raw])
    assert shared > 50  # most files are carried from one revision to the next
