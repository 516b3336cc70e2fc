"""An emulated hour on a hub with 10,000 watched repos, models alone and models and datasets mixed:
requests per poll cycle (one listing per repo type watched when nothing moved) and the lag from an
upstream commit to its stored revision and advisory.

The emulator serves every bundled history (and the test-only ones) at v1, and in the mixed run
the bundled dataset histories (tests/data/datasets) too; the store watches those repos plus quiet
ones up to 10,000 (8,000 models and 2,000 datasets in the mixed run; polled just before the hour,
so their safety re-checks fall after it). Before the hour two cycles are measured: one in which
nothing moved, one in which a few repos of each type moved by one commit. The clock is fixed and
advanced by one poll interval (300 s) per cycle; each later commit of the histories appears at a
random emulated time within the hour (in order per repo, listed as modified then), so each
cycle's listings show what moved since the last. Lag is measured in emulated time, from a
commit's appearance to the end of the cycle that stored it (advisories are stored in the same
transaction as their revision). Run: `python -m benchmarks.tracker_hour [--datasets N]` (writes
benchmarks/results/tracker_hour.md); exit 1 when a commit was not stored, a poll failed or the idle
cycle sent anything but one listing request per repo type watched.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hubwatch.domain.records import RepoId, RepoType
from hubwatch.hubsim import HubSim
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import Failed, NewRevisions
from hubwatch.tracker.scheduler import PollCycle

import sqlalchemy as sa

from benchmarks.tracker_poll import ROOT, _root, counting

__all__ = ["main"]

RESULTS = Path(__file__).resolve().parent / "results" / "tracker_hour.md"
WATCHED = 10_000
DATASETS = 2_000  # of the WATCHED, in the mixed run
MOVED = 3  # repos of each type moved in the measured cycle before the hour
INTERVAL_S = 300
HOUR_S = 3600


def _fill(store: Store, count: int, now: datetime, repo_type: RepoType = RepoType.MODEL) -> None:
    """`count` quiet watched repos of `repo_type` polled just now, next due at their re-check in 6 h
    (one bulk insert)."""
    if count <= 0:
        return
    columns = {c["name"] for c in sa.inspect(store.engine).get_columns("repos")}
    letter = "m" if repo_type is RepoType.MODEL else "d"
    rows = [{"org": "bench", "name": f"{letter}{i:06d}", "w": True, "t": now, "sha": f"{i:040x}",
             "due": now + timedelta(hours=6), "key": f"{repo_type.prefix}bench/{letter}{i:06d}",
             "type": repo_type.value} for i in range(count)]  # fmt: skip
    ids = [c for c in ("key", "first_id") if c in columns]  # the case-insensitive key, the first id (renames)
    typed = ["repo_type"] if "repo_type" in columns else []
    names = ", ".join(["org", "name", "watched", "state", "failures", "created_at", "head_sha", "last_polled_at",
                       "next_poll_at", *ids, *typed])
    values = ", ".join([":org", ":name", ":w", "'ok'", "0", ":t", ":sha", ":t", ":due", *[":key" for _ in ids],
                        *[":type" for _ in typed]])
    with store.engine.begin() as conn:
        conn.execute(sa.text(f"INSERT INTO repos ({names}) VALUES ({values})"), rows)


def _link_datasets(root: Path) -> None:
    """The bundled dataset histories (tests/data/datasets, the gated one left out) under ROOT/datasets/."""
    (root / "datasets").mkdir()
    for folder in sorted((ROOT / "tests" / "data" / "datasets").iterdir()):
        if folder.is_dir() and "__" in folder.name and "gated" not in folder.name:
            (root / "datasets" / folder.name).symlink_to(folder.resolve(), target_is_directory=True)


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))] if ordered else 0.0


@dataclass
class Mix:
    """One run's figures: `models` + `datasets` watched repos."""

    models: int
    datasets: int
    active: dict[RepoType, int] = field(default_factory=dict)
    idle: list[str] = field(default_factory=list)  # the requests of a cycle in which nothing moved
    moved: list[str] = field(default_factory=list)  # of a cycle with MOVED of each type moved
    moved_repos: dict[RepoType, int] = field(default_factory=dict)
    moved_revisions: int = 0
    per_cycle: list[int] = field(default_factory=list)
    lags: list[float] = field(default_factory=list)
    advised_lags: list[float] = field(default_factory=list)
    appeared: int = 0
    failed: int = 0
    wall_s: float = 0.0

    @property
    def types(self) -> list[RepoType]:
        return [t for t, n in ((RepoType.MODEL, self.models), (RepoType.DATASET, self.datasets)) if n]

    @property
    def ok(self) -> bool:
        return len(self.lags) == self.appeared and not self.failed and sorted(self.idle) == sorted(
            LISTING[t] for t in self.types)


LISTING = {RepoType.MODEL: "GET /api/models", RepoType.DATASET: "GET /api/datasets"}


def _run(models: int, datasets: int) -> Mix:
    rng = random.Random(3600)
    mix = Mix(models, datasets)
    with tempfile.TemporaryDirectory() as tmp, counting() as requests:
        root = Path(tmp) / "root"
        root.mkdir()
        _root(root)
        if datasets:
            _link_datasets(root)
        sim = HubSim(root, at="v1").start()
        store = Store.open(f"sqlite:///{Path(tmp) / 'hour.db'}")
        start = datetime.now(timezone.utc).replace(microsecond=0)
        offset = [timedelta(seconds=-3 * INTERVAL_S)]
        settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, poll_interval_s=INTERVAL_S)
        cycle = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="bench",
                          clock=lambda: start + offset[0])
        try:
            repos = sorted(RepoId.parse(r) for r in sim.state.repos)
            for repo in repos:
                store.watch(repo)
            cycle()  # the starting state: every repo at v1 (not advised), before the hour
            for repo_type, wanted in ((RepoType.MODEL, models), (RepoType.DATASET, datasets)):
                mix.active[repo_type] = sum(r.repo_type is repo_type for r in repos)
                _fill(store, wanted - mix.active[repo_type], start, repo_type)
            # Before the hour, two measured cycles: nothing moved; then MOVED repos of each type moved.
            offset[0] = timedelta(seconds=-2 * INTERVAL_S)
            requests.clear()
            assert cycle() == []
            mix.idle = list(requests)
            for repo_type in mix.types:
                movable = [r for r in repos if r.repo_type is repo_type
                           and sim.state.visible_count(str(r)) < len(sim.state.history(str(r)).commits)]
                for repo in movable[:MOVED]:
                    sim.advance(str(repo), at=start - timedelta(seconds=INTERVAL_S + 30))
                mix.moved_repos[repo_type] = len(movable[:MOVED])
            offset[0] = timedelta(seconds=-INTERVAL_S)
            requests.clear()
            outcomes = cycle()
            mix.moved = list(requests)
            mix.moved_revisions = sum(len(o.shas) for o in outcomes if isinstance(o, NewRevisions))
            mix.failed += sum(isinstance(o, Failed) for o in outcomes)
            # Each later commit appears at a random second of the hour, in order within its repo.
            pending: list[tuple[float, str]] = []
            for repo in repos:
                later = len(sim.state.history(str(repo)).commits) - sim.state.visible_count(str(repo))
                pending += [(t, str(repo)) for t in sorted(rng.uniform(1, HOUR_S) for _ in range(later))]
            pending.sort()
            appeared: dict[tuple[str, str], float] = {}
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
                mix.per_cycle.append(len(requests))
                mix.failed += sum(isinstance(o, Failed) for o in outcomes)
                for outcome in outcomes:
                    if not isinstance(outcome, NewRevisions):
                        continue
                    advised = {e.revision.sha for e in store.history(outcome.repo) if e.advisory_ids}
                    for sha in outcome.shas:
                        lag = now_s - appeared[(str(outcome.repo), sha)]
                        mix.lags.append(lag)
                        if sha in advised:
                            mix.advised_lags.append(lag)
            mix.wall_s = time.perf_counter() - wall
            mix.appeared = len(appeared)
        finally:
            cycle.close()
            store.close()
            sim.stop()
    return mix


def _requests_text(seen: Sequence[str], types: Sequence[RepoType]) -> str:
    listed = [f"{sum(r == LISTING[t] for r in seen)} `{LISTING[t]}`" for t in types]
    others = sum(r not in LISTING.values() for r in seen)
    return f"{len(seen)}: " + " + ".join(listed) + (f" + {others} about the moved repos" if others else "")


def _rows(mix: Mix) -> list[tuple[str, str]]:
    per_cycle, lags, advised = mix.per_cycle, mix.lags, mix.advised_lags
    stored, total = len(lags), sum(per_cycle)
    watched = " + ".join(f"{n:,} {t}s ({mix.active[t]} with activity)" for t, n in
                         ((RepoType.MODEL, mix.models), (RepoType.DATASET, mix.datasets)) if n)  # fmt: skip
    moved = " and ".join(f"{mix.moved_repos[t]} {t}s" for t in mix.types)
    return [
        ("watched repos", f"{mix.models + mix.datasets:,}: {watched}, the rest quiet"),
        ("requests of a cycle in which nothing moved", _requests_text(mix.idle, mix.types)),
        (f"requests of a cycle with up to {MOVED} repos of each type moved",
         f"{moved} moved, {mix.moved_revisions} new revisions: {_requests_text(mix.moved, mix.types)}"),
        ("emulated time, cycles", f"{HOUR_S // 60} min, {len(per_cycle)} cycles of {INTERVAL_S} s"),
        ("commits that appeared / stored within the hour", f"{mix.appeared} / {stored} ({mix.failed} failed polls)"),
        ("requests per cycle in the hour: median, p95, max", f"{statistics.median(per_cycle):.0f}, "
         f"{_percentile(per_cycle, 0.95):.0f}, {max(per_cycle)}"),
        ("requests in the hour; per stored revision", f"{total}; {total / max(stored, 1):.1f}"),
        ("requests per watched repo per cycle", f"{total / len(per_cycle) / (mix.models + mix.datasets):.4f}"),
        ("lag commit → stored revision: median, p95", f"{statistics.median(lags):.0f} s, {_percentile(lags, 0.95):.0f} s"
         f" (× interval: {statistics.median(lags) / INTERVAL_S:.2f}, {_percentile(lags, 0.95) / INTERVAL_S:.2f})"),
        ("lag commit → advisory: median, p95", f"{statistics.median(advised):.0f} s, "
         f"{_percentile(advised, 0.95):.0f} s ({len(advised)} advised revisions)" if advised else "no advisory"),
        ("wall time of the hour's cycles", f"{mix.wall_s:.1f} s"),
        ("requests per cycle in the hour", ", ".join(str(n) for n in per_cycle)),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--datasets", type=int, default=None, metavar="N",
                        help=f"run one mix: {WATCHED:,} watched repos of which N datasets (default: two runs, "
                             f"0 and {DATASETS:,} datasets)")
    args = parser.parse_args(argv)
    counts = [0, DATASETS] if args.datasets is None else [args.datasets]
    if any(not 0 <= n <= WATCHED for n in counts):
        parser.error(f"--datasets must be between 0 and {WATCHED:,}")
    mixes = [_run(WATCHED - n, n) for n in counts]
    table = [_rows(m) for m in mixes]
    heads = [" + ".join(f"{n:,} {t}s" for t, n in ((RepoType.MODEL, m.models), (RepoType.DATASET, m.datasets)) if n)
             for m in mixes]  # fmt: skip
    lines = ["# tracker: an emulated hour", "", "`python -m benchmarks.tracker_hour` — emulator over loopback HTTP, "
             "SQLite, one worker, the official client; each column one run (`--datasets N` runs one mix).", "",
             "| measure | " + " | ".join(heads) + " |", "|---|" + "---|" * len(mixes),
             *[f"| {rows[0][0]} | " + " | ".join(r[i][1] for r in table) + " |" for i, rows in
               enumerate(zip(*table))],  # fmt: skip
             "",
             "A cycle reads one recently-modified listing per repo type watched (`/api/models`, `/api/datasets`); "
             f"the two measured cycles run before the hour, the moved one with up to {MOVED} repos of each type "
             "moved by one commit. The quiet repos' safety re-checks (one head request each, every "
             "HUBWATCH_RECHECK_INTERVAL_S = 6 h) fall outside this hour: at 10,000 repos they add 10,000 / 72 ≈ "
             "139 requests per 300-s cycle when spread evenly.", ""]
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0 if all(m.ok for m in mixes) else 1


if __name__ == "__main__":
    sys.exit(main())
