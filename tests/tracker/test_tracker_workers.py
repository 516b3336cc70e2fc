"""Three `hubwatch run --no-web` processes on one PostgreSQL schema (issue 10's proof): they back
fill every bundled history at v1 and then take every later commit, with zero duplicate revisions,
advisories or rewrites, the final content identical to a single clean run, and no worker doing
more than 60% of the revisions (counted per worker from poll_cycles)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from hubwatch.domain.records import RepoId
from hubwatch.storage import Store
from tests.tracker.store_content import duplicates, store_content
from tests.tracker.workers import advance_all, clean_run, complete, start_worker, wait_for

pytestmark = pytest.mark.postgres


def test_three_workers_share_a_replay_without_duplicates(
    hubsim_factory: Any, postgres_url: str, tmp_path: Path
) -> None:
    clean_sim = hubsim_factory(at="v1")
    clean = clean_run(clean_sim, f"sqlite:///{tmp_path / 'clean.db'}", then_advance=True)
    expected = store_content(clean.engine)
    clean.close()
    clean_sim.stop()

    sim = hubsim_factory(at="v1", faults={"latency_ms": 5})
    store = Store.open(postgres_url)
    for repo in sorted(RepoId.parse(r) for r in sim.state.repos):
        store.watch(repo)
    workers: list[subprocess.Popen[bytes]] = []
    try:
        workers = [start_worker(sim, postgres_url, f"w{i}") for i in (1, 2, 3)]
        assert wait_for(lambda: complete(store, sim), 25) is not None, "v1 of every repo not stored in 25 s"
        shown = advance_all(sim)
        took = wait_for(lambda: complete(store, sim), 35)  # measured 13–22 s: one or two 10-s rounds
        assert took is not None, "the later commits were not all stored within 35 s (3 cycles and the work)"
        time.sleep(0.5)
    finally:
        for proc in workers:
            proc.terminate()
        for proc in workers:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    try:
        got = store_content(store.engine)
        assert duplicates(got) == {t: 0 for t in got}
        for table in expected:
            assert got[table] == expected[table], table
        with store.engine.connect() as conn:
            by_worker = dict(conn.execute(sa.text(
                "SELECT worker, sum(new_revisions) FROM poll_cycles GROUP BY worker")).all())
        total = sum(int(v) for v in by_worker.values())
        assert total == len(got["revisions"]) and shown > 0
        share = {w: int(n) / total for w, n in by_worker.items()}
        print(f"revisions by worker: {by_worker} (shares {share}); later commits stored {took:.1f} s after they appeared")
        assert max(share.values()) <= 0.6, share
    finally:
        store.close()
