"""A store written by the release before issue 9's model (tests/data/old_store/d45be41.db, made by
make_old_store.py next to it) is re-derived on the next start: ids kept, meanings checked, idempotent."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hubwatch.advisories.reconcile import ADVISORY_MODEL
from hubwatch.domain.records import AdvisoryRecord, RepoId
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import poll_repos
from hubwatch.tracker.rederive import MODEL_KEY, rederive_if_needed

NOW = datetime(2027, 1, 1, tzinfo=timezone.utc)
REPOS = [RepoId.parse(r) for r in ("meta-llama/Llama-2-7b-hf", "tiiuae/falcon-7b-instruct",
                                   "deepseek-ai/DeepSeek-R1", "Qwen/Qwen-7B-Chat")]  # fmt: skip


def _content(record: AdvisoryRecord) -> dict[str, Any]:
    return {k: v for k, v in record.osv.items() if k not in ("modified", "withdrawn")}


def _old_store(data_dir: Path, tmp_path: Path) -> str:
    target = tmp_path / "old.db"
    shutil.copy(data_dir / "old_store" / "d45be41.db", target)
    return f"sqlite:///{target}"


def test_an_old_store_is_rederived_with_ids_kept_and_meanings_withdrawn(
    data_dir: Path, tmp_path: Path, hubsim_factory: Any
) -> None:
    url = _old_store(data_dir, tmp_path)
    settings = Settings(database_url=url)
    with Store.open(url) as store:
        before = {r.id: r for r in store.advisories.records()}
        assert len(before) == 23 and store.meta(MODEL_KEY) is None
        assert rederive_if_needed(store, settings, clock=lambda: NOW) == len(REPOS)
        after = {r.id: r for r in store.advisories.records()}
        assert store.meta(MODEL_KEY) == str(ADVISORY_MODEL)
        # Every published id is still there: kept, updated, or withdrawn (never deleted).
        assert set(before) <= set(after)
        withdrawn = {i for i, r in after.items() if r.withdrawn is not None}
        for advisory_id in withdrawn:
            assert after[advisory_id].modified > before[advisory_id].modified
            assert _content(after[advisory_id]) == _content(before[advisory_id])  # kept as published
        # The old risk records of neutral changes are withdrawn; e.g. Llama-2's pad_token_id removal.
        llama_old_risks = [i for i in before if not i.endswith("-fix") and before[i].repo == REPOS[0]]
        assert llama_old_risks and set(llama_old_risks) <= withdrawn
        for record in after.values():
            assert "fixed in this revision" not in record.osv["summary"]
        # A second start writes nothing.
        assert rederive_if_needed(store, settings, clock=lambda: NOW) == 0
        store.set_meta(MODEL_KEY, "1")
        assert rederive_if_needed(store, settings, clock=lambda: NOW) == 0  # re-run on a current store: no-op
        assert {r.id: (r.osv, r.modified, r.withdrawn) for r in store.advisories.records()} == {
            r.id: (r.osv, r.modified, r.withdrawn) for r in after.values()
        }
        live = {i: r for i, r in after.items() if r.withdrawn is None}
        changes = {e.revision.sha: e.changes for repo in REPOS for e in store.history(repo)}

    # The live records are exactly what today's release derives from the same histories.
    fresh_url = f"sqlite:///{tmp_path / 'fresh.db'}"
    sim = hubsim_factory(at=None)
    fresh_settings = Settings(database_url=fresh_url, hub_endpoint=sim.url)
    with Store.open(fresh_url) as fresh:
        for repo in REPOS:
            fresh.watch(repo)
        poll_repos(REPOS, hub=HubClient.from_settings(fresh_settings), store=fresh, settings=fresh_settings)
        expected = {r.id: r for r in fresh.advisories.records()}
        fresh_changes = {e.revision.sha: e.changes for repo in REPOS for e in fresh.history(repo)}
    assert sorted(live) == sorted(expected)
    for advisory_id, record in live.items():
        assert _content(record) == _content(expected[advisory_id]), advisory_id
    assert {s: [(c.kind, c.path, c.summary, c.direction) for c in cs] for s, cs in changes.items()} == {
        s: [(c.kind, c.path, c.summary, c.direction) for c in cs] for s, cs in fresh_changes.items()
    }
