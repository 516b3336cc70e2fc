"""An emulated hour on a hub with 10,000 watched repos: requests per poll cycle and the lag from an
upstream commit to its stored revision and advisory.

The emulator serves every bundled history (and the test-only ones) at v1; the store watches those repos plus quiet ones up
to 10,000 (polled just before the hour, so their safety re-checks fall after it). The clock is
fixed and advanced by one poll interval (300 s) per cycle; each later commit of the histories
appears at a random emulated time within the hour (in order per repo, listed as modified then),
so each cycle's listing shows what moved since the last. Lag is measured in emulated time, from a
commit's appearance to the end of the cycle that stored it (advisories are stored in the same
transaction as their revision). Run: `python -m benchmarks.tracker_hour` (writes
benchmarks/results/tracker_hour.md).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hubwatch.domain.records import RepoId
from hubwatch.hubsim import HubSim
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import Failed, NewRevisions
from hubwatch.tracker.scheduler import PollCycle

import sqlalchemy as sa

from benchmarks.tracker_poll import _root, counting

__all__ = ["main"]

RESULTS = Path(__file__).resolve().parent / "results" / "tracker_hour.md"
WATCHED = 10_000
INTERVAL_S = 300
HOUR_S = 3600


def _fill(store: Store, count: int, now: datetime) -> None:
    """`count` quiet watched repos polled just now, next due at their re-check in 6 h (one bulk insert)."""
    columns = {c["name"] for c in sa.inspect(store.engine).get_columns("repos")}
    rows = [{"org": "bench", "name": f"m{i:06d}", "w": True, "t": now, "sha": f"{i:040x}",
             "due": now + timedelta(hours=6), "key": f"bench/m{i:06d}"} for i in range(count)]
    ids = [c for c in ("key", "first_id") if c in columns]  # the case-insensitive key, the first id (renames)
    names = ", ".join(["org", "name", "watched", "state", "failures", "created_at", "head_sha", "last_polled_at",
                       "next_poll_at", *ids])
    values = ", ".join([":org", ":name", ":w", "'ok'", "0", ":t", ":sha", ":t", ":due", *[":key" for _ in ids]])
    with store.engine.begin() as conn:
        conn.execute(sa.text(f"INSERT INTO repos ({names}) VALUES ({values})"), rows)


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))] if ordered else 0.0


def main() -> int:
    rng = random.Random(3600)
    with tempfile.TemporaryDirectory() as tmp, counting() as requests:
        root = Path(tmp) / "root"
        root.mkdir()
        _root(root)
        sim = HubSim(root, at="v1").start()
        store = Store.open(f"sqlite:///{Path(tmp) / 'hour.db'}")
        start = datetime.now(timezone.utc).replace(microsecond=0)
        offset = [timedelta()]
        settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, poll_interval_s=INTERVAL_S)
        cycle = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="bench",
                          clock=lambda: start + offset[0])
        try:
            repos = sorted(RepoId.parse(r) for r in sim.state.repos)
            for repo in repos:
                store.watch(repo)
            cycle()  # the starting state: every repo at v1 (not advised), before the hour
            _fill(store, WATCHED - len(repos), start)
            # Each later commit appears at a random second of the hour, in order within its repo.
            pending: list[tuple[float, str]] = []
            for repo in repos:
                later = len(sim.state.history(str(repo)).commits) - sim.state.visible_count(str(repo))
                pending += [(t, str(repo)) for t in sorted(rng.uniform(1, HOUR_S) for _ in range(later))]
            pending.sort()
            appeared: dict[tuple[str, str], float] = {}
            per_cycle: list[int] = []
            lags: list[float] = []
            advised_lags: list[float] = []
            failed = 0
            wall = time.perf_counter()
            for n in range(1, HOUR_S // INTERVAL_S + 1):
                now_s = n * INTERVAL_S
                while pending and pending[0][0] <= now_s:
                    at_s, repo_id = pending.pop(0)
                    sha = sim.advance(repo_id, at=start + timedelta(seconds=at_s))
                    appeared[(repo_id, sha)] = at_s
                offset[0] = timedelta(seconds=now_s)
                requests.clear()
                outcomes = cycle()
                per_cycle.append(len(requests))
                failed += sum(isinstance(o, Failed) for o in outcomes)
                for outcome in outcomes:
                    if not isinstance(outcome, NewRevisions):
                        continue
                    advised = {e.revision.sha for e in store.history(outcome.repo) if e.advisory_ids}
                    for sha in outcome.shas:
                        lag = now_s - appeared[(str(outcome.repo), sha)]
                        lags.append(lag)
                        if sha in advised:
                            advised_lags.append(lag)
            wall_s = time.perf_counter() - wall
            stored, active = len(lags), len(repos)
        finally:
            cycle.close()
            store.close()
            sim.stop()
    total = sum(per_cycle)
    rows = [
        ("watched repos", f"{WATCHED:,}: {active} emulated histories with activity, the rest quiet"),
        ("emulated time, cycles", f"{HOUR_S // 60} min, {len(per_cycle)} cycles of {INTERVAL_S} s"),
        ("commits that appeared / stored within the hour", f"{len(appeared)} / {stored} ({failed} failed polls)"),
        ("requests per cycle: median, p95, max", f"{statistics.median(per_cycle):.0f}, "
         f"{_percentile(per_cycle, 0.95):.0f}, {max(per_cycle)}"),
        ("requests in the hour; per stored revision", f"{total}; {total / max(stored, 1):.1f}"),
        ("requests per watched repo per cycle", f"{total / len(per_cycle) / WATCHED:.4f}"),
        ("lag commit → stored revision: median, p95", f"{statistics.median(lags):.0f} s, {_percentile(lags, 0.95):.0f} s"
         f" (× interval: {statistics.median(lags) / INTERVAL_S:.2f}, {_percentile(lags, 0.95) / INTERVAL_S:.2f})"),
        ("lag commit → advisory: median, p95", f"{statistics.median(advised_lags):.0f} s, "
         f"{_percentile(advised_lags, 0.95):.0f} s ({len(advised_lags)} advised revisions)"
         if advised_lags else "no advisory"),
        ("wall time of the hour's cycles", f"{wall_s:.1f} s"),
    ]
    lines = ["# tracker: an emulated hour", "", "`python -m benchmarks.tracker_hour` — emulator over loopback HTTP, "
             "SQLite, one worker, the official client.", "", "| measure | value |", "|---|---|",
             *[f"| {a} | {b} |" for a, b in rows], "",
             "Requests per cycle: " + ", ".join(str(n) for n in per_cycle) + ".", "",
             "The quiet repos' safety re-checks (one head request each, every HUBWATCH_RECHECK_INTERVAL_S = 6 h) "
             "fall outside this hour: at 10,000 repos they add 10,000 / 72 ≈ 139 requests per 300-s cycle "
             "when spread evenly.", ""]
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0 if stored == len(appeared) and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
