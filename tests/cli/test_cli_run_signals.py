"""`hubwatch run --no-web` as a real process: SIGTERM ends in-flight work cleanly within a bound,
nothing recorded as an error, no failure counted, no lease left (issue 10)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from hubwatch.domain.records import RepoId
from hubwatch.storage import Store



def _worker(sim: Any, db: str, **env: str) -> subprocess.Popen[bytes]:
    environ = {**os.environ, "HUBWATCH_DATABASE_URL": db, "HUBWATCH_HUB_ENDPOINT": sim.url,
               "HUBWATCH_POLL_INTERVAL_S": "10", "HUBWATCH_LEASE_S": "4", **env}
    return subprocess.Popen([sys.executable, "-m", "hubwatch", "run", "--no-web"], env=environ,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_sigterm_stops_a_backfill_cleanly(hubsim_factory: Any, tmp_path: Path) -> None:
    sim = hubsim_factory(at=None, faults={"latency_ms": 40})
    db = f"sqlite:///{tmp_path / 'w.db'}"
    repos = [RepoId.parse(r) for r in sim.state.repos]
    with Store.open(db) as store:
        for repo in repos:
            store.watch(repo)
        proc = _worker(sim, db, HUBWATCH_SHUTDOWN_GRACE_S="10")
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not any(store.head(r) for r in repos):
                time.sleep(0.1)
            assert any(store.head(r) for r in repos), "the worker stored nothing in 30 s"
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(timeout=20)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
        assert rc == 0, proc.stderr.read().decode() if proc.stderr else rc
        assert took < 15
        states = store.repos.watched()
        assert [s.repo for s in states if s.state == "error" or s.failures] == []
        assert [s.repo for s in states if s.lease_owner is not None] == []
        with store.engine.connect() as conn:
            errors = conn.execute(sa.text("SELECT count(*) FROM poll_runs WHERE error IS NOT NULL")).scalar_one()
        assert errors == 0
