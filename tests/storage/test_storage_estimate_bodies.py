"""Estimates are stored compactly: an estimate body shared by revisions whose config did not change
is stored once, reads give back exactly what was written, and 0012 migrates stored estimates."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from hubwatch.domain.records import RepoId
from hubwatch.storage import Store
from storage_helpers import downgrade_to, rev, sha, upgrade_to_head

REPO = RepoId("org", "model")


def _estimate(label: str, params: int = 7_000_000_000) -> dict[str, Any]:
    return {"model": "llama", "revision": sha(label), "params": {"derived": params}, "memory": {"lora": 16.5}}


def _count(store: Store, table: str) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())


def _save_chain(store: Store, estimates: Sequence[dict[str, Any] | None]) -> None:
    parent = None
    for i, data in enumerate(estimates):
        label = f"r{i}"
        assert store.save_revision(REPO, rev(label, parent, day=i), [], {}, [], None if data is None else ("v1", data), [])
        parent = label


def test_equal_estimates_are_stored_once_and_read_back_naming_their_revision(database_url: str) -> None:
    with Store.open(database_url) as store:
        store.watch(REPO)
        written = [_estimate("r0"), _estimate("r1"), _estimate("r2"), _estimate("r3", params=8_000_000_000), None]
        _save_chain(store, written)
        assert _count(store, "estimates") == 4
        assert _count(store, "estimate_bodies") == 2  # r0–r2 share one body; r3's differs
        history = store.history(REPO)
        assert [e.estimate for e in history] == written
        # the key order of what was written is kept (the web app and the JSON API print it)
        assert [list(e.estimate) for e in history if e.estimate] == [list(w) for w in written if w]
        series = store.revisions.estimate_series(REPO)
        assert [p.estimate for p in series] == written


def test_estimates_without_a_revision_key_and_odd_revision_values_round_trip(database_url: str) -> None:
    odd: list[dict[str, Any] | None] = [
        {"params": {"derived": 1}},  # no revision key at all (what a test or an old writer stores)
        {"revision": None, "error": "config.json is not valid JSON"},  # a failed estimate
        {"revision": "ünïcode \ud800 text", "params": {"derived": 1}},
        {"revision": {"nested": [1, 2]}, "params": {"derived": 1}},
    ]
    with Store.open(database_url) as store:
        store.watch(REPO)
        _save_chain(store, odd)
        assert [e.estimate for e in store.history(REPO)] == odd
        assert _count(store, "estimate_bodies") == 3  # the last two share {"revision": null, "params": …}


def test_replacing_an_estimate_drops_a_body_no_other_revision_uses(database_url: str) -> None:
    with Store.open(database_url) as store:
        store.watch(REPO)
        _save_chain(store, [_estimate("r0"), _estimate("r1")])
        assert _count(store, "estimate_bodies") == 1
        # r1 re-estimated to something new: the shared body stays (r0 uses it), the new one is added
        assert store.revisions.save_estimate(REPO, sha("r1"), "v1", _estimate("r1", params=9))
        assert _count(store, "estimate_bodies") == 2
        # r1 re-estimated again: its previous body, used by nobody else now, goes
        assert store.revisions.save_estimate(REPO, sha("r1"), "v1", _estimate("r1", params=10))
        assert _count(store, "estimate_bodies") == 2
        assert [e.estimate for e in store.history(REPO)] == [_estimate("r0"), _estimate("r1", params=10)]


def test_0012_splits_stored_estimates_and_downgrades_back(database_url: str) -> None:
    written = [_estimate("r0"), _estimate("r1"), {"params": {"derived": 3}}, _estimate("r3", params=5)]
    with Store.open(database_url) as store:
        store.watch(REPO)
        _save_chain(store, written)
        engine = store.engine
        downgrade_to(engine, "0011_poll_cycle_requests")
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT data FROM estimates ORDER BY id")).scalars().all()
            assert [r if isinstance(r, dict) else json.loads(r) for r in rows] == written
            assert not sa.inspect(conn).has_table("estimate_bodies")
        upgrade_to_head(engine)
        assert _count(store, "estimate_bodies") == 3  # r0 and r1 share theirs
        assert [e.estimate for e in store.history(REPO)] == written
        assert {c["name"] for c in sa.inspect(engine).get_columns("estimates")} >= {"body_sha256", "revision_json"}
        assert "data" not in {c["name"] for c in sa.inspect(engine).get_columns("estimates")}
