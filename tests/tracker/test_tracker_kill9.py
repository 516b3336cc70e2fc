"""kill -9 during a replay (issue 10's proof): a `hubwatch run --no-web` worker is killed twenty
times while it backfills every bundled history — on a SQLite file and, when
HUBWATCH_TEST_POSTGRES_URL is set, on a PostgreSQL schema — and restarted, alternately under the
same `--worker-id` (which takes its old leases back at once) and a new one (which waits for the
dead worker's 2-s leases to run out); every repo is complete within two lease periods plus one
cycle interval (and the work left) of the last restart, and the store equals a clean run's."""

from __future__ import annotations

import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from hubwatch.domain.records import RepoId
from hubwatch.storage import Store
from tests.tracker.store_content import duplicates, store_content
from tests.tracker.workers import FAST_ENV, clean_run, complete, start_worker, wait_for

KILLS = 20  # the count; each kill lands mid-backfill (asserted), about 1.4 s apart
LEASE_S, INTERVAL_S = float(FAST_ENV["HUBWATCH_LEASE_S"]), float(FAST_ENV["HUBWATCH_POLL_INTERVAL_S"])
_CLEAN: dict[str, list[tuple[Any, ...]]] = {}  # the clean run's store content, computed by the first test that needs it
WORK_LEFT_S = 12.0  # startup and the revisions left after the last kill, on a busy 2-core machine


def _revisions(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.text("SELECT count(*) FROM revisions")).scalar_one())


def test_kill_9_again_and_again_during_a_backfill(hubsim_factory: Any, database_url: str, tmp_path: Path) -> None:
    if not _CLEAN:  # one clean run serves both databases (the content compared is dialect-neutral)
        clean_sim = hubsim_factory(at=None)
        clean = clean_run(clean_sim, f"sqlite:///{tmp_path / 'clean.db'}", then_advance=False)
        _CLEAN.update(store_content(clean.engine))
        clean.close()
        clean_sim.stop()
    expected = _CLEAN

    sim = hubsim_factory(at=None, faults={"latency_ms": 25})  # a slower hub: the backfill spans the kills
    db = database_url
    store = Store.open(db)
    for repo in sorted(RepoId.parse(r) for r in sim.state.repos):
        store.watch(repo)
    rng = random.Random(9)
    kills, proc = 0, None
    try:
        while kills < KILLS:
            worker_id = "k" if kills % 2 == 0 else f"k{kills}"  # the same id and a new one, alternately
            before = _revisions(store)
            proc = start_worker(sim, db, worker_id)
            assert wait_for(lambda: _revisions(store) > before, 20, 0.05) is not None, "no progress in 20 s"
            time.sleep(rng.uniform(0.0, 0.4))
            assert not complete(store, sim), f"the backfill ended before kill {kills + 1}: slow the emulator more"
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            kills += 1
        proc = start_worker(sim, db, "k" if kills % 2 == 0 else f"k{kills}")
        took = wait_for(lambda: complete(store, sim), 2 * LEASE_S + INTERVAL_S + WORK_LEFT_S)
        assert took is not None, f"not complete within {2 * LEASE_S + INTERVAL_S + WORK_LEFT_S} s of the last restart"
        print(f"{kills} kills; complete {took:.1f} s after the last restart")
    finally:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    try:
        assert kills == KILLS
        got = store_content(store.engine)
        assert duplicates(got) == {t: 0 for t in got}
        for table in expected:
            assert got[table] == expected[table], table
    finally:
        store.close()
