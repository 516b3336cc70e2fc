"""Speed and request cost of polling through the emulator (real HTTP, real client, SQLite).

Targets: backfilling every bundled history (23 repos, ~100 revisions) ≤ 60 s; a poll cycle in
which nothing moved costs ≤ 1 request per listing page (not one per repo) and, with 100,000
watched repos in SQLite, store work for what moved or is due only (target ≤ 100 ms, where
loading the whole watch list takes about a second); a cycle in which 5 repos moved costs only
those repos' requests plus the listing.
Run: `python -m benchmarks.tracker_poll` (writes benchmarks/results/tracker_poll.md).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import sqlalchemy as sa
from rich.console import Console
from rich.table import Table

from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.domain.records import RepoId
from hubwatch.tracker.hub import HubClient
from hubwatch.hubsim import HubSim, demo_root
from hubwatch.tracker.poller import Failed, NewRevisions
from hubwatch.tracker.scheduler import PollCycle

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results" / "tracker_poll.md"
TARGET_BACKFILL_S = 60.0
MOVED = 5
FILLER = 100_000
TARGET_QUIET_MS = 100.0


@contextmanager
def counting() -> Iterator[list[str]]:
    """Every request huggingface_hub sends (its client-factory hook; nothing patched)."""
    import httpx2
    from huggingface_hub.utils import set_client_factory  # type: ignore[attr-defined]
    from huggingface_hub.utils._http import default_client_factory, hf_request_event_hook

    seen: list[str] = []

    def record(request: httpx2.Request) -> None:
        seen.append(f"{request.method} {request.url.path}")

    set_client_factory(
        lambda: httpx2.Client(event_hooks={"request": [hf_request_event_hook, record]}, follow_redirects=True)
    )
    try:
        yield seen
    finally:
        set_client_factory(default_client_factory)


def _root(into: Path) -> Path:
    for source in (ROOT / "tests" / "data" / "histories", demo_root(), ROOT / "tests" / "data" / "hubsim"):
        for folder in sorted(source.iterdir()):
            if folder.is_dir() and "__" in folder.name and "gated" not in folder.name:
                (into / folder.name).symlink_to(folder.resolve(), target_is_directory=True)
    return into


def _cycle(sim: HubSim, store: Store, offset: list[timedelta]) -> PollCycle:
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, poll_interval_s=60)
    return PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="bench",
                     clock=lambda: datetime.now(timezone.utc) + offset[0])


def _fill(store: Store, count: int, now: datetime) -> None:
    """`count` watched repos polled just now, next due at their re-check (bulk insert)."""
    with store.engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO repos (org, name, key, first_id, watched, state, failures, created_at, head_sha,"
                " last_polled_at, next_poll_at) VALUES (:org, :name, :key, :key, :w, 'ok', 0, :t, :sha, :t, :due)"
            ),
            [{"org": "bench", "name": f"m{i:06d}", "key": f"bench/m{i:06d}", "w": True, "t": now,
              "sha": f"{i:040x}", "due": now + timedelta(hours=6)} for i in range(count)],
        )


def main() -> int:
    console = Console()
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp, counting() as requests:
        root = Path(tmp) / "root"
        root.mkdir()
        _root(root)
        repos = sorted({RepoId.parse(f.name.replace("__", "/")) for f in root.iterdir()})
        sim = HubSim(root, at=None).start()
        full = Store.open(f"sqlite:///{Path(tmp) / 'full.db'}")
        live = Store.open(f"sqlite:///{Path(tmp) / 'live.db'}")
        try:
            # 1. A whole backfill: every revision of every repo, through diff, estimate and advise.
            offset = [timedelta()]
            for repo in repos:
                full.watch(repo)
            start = time.perf_counter()
            outcomes = _cycle(sim, full, offset)()
            backfill_s = time.perf_counter() - start
            revisions = sum(len(o.shas) for o in outcomes if isinstance(o, NewRevisions))
            failed = [o for o in outcomes if isinstance(o, Failed)]
            rows.append(("backfill", f"{len(repos)} repos, {revisions} revisions, {len(failed)} failed",
                         f"{backfill_s:.1f} s, {backfill_s / max(revisions, 1) * 1000:.0f} ms/revision, "
                         f"{len(requests)} requests (target ≤ {TARGET_BACKFILL_S:.0f} s)"))

            # 2. Live: every repo at v1, then cycles an interval apart.
            sim.reset(at=1)
            cycle = _cycle(sim, live, offset)
            for repo in repos:
                live.watch(repo)
            cycle()
            _fill(live, FILLER, datetime.now(timezone.utc))
            start = time.perf_counter()
            everything = live.repos.watched()
            load_ms = (time.perf_counter() - start) * 1000
            rows.append(("reference: whole watch list load (each cycle did this before)",
                         f"{len(everything)} watched repos", f"{load_ms:.0f} ms"))
            offset[0] = timedelta(seconds=61)
            requests.clear()
            start = time.perf_counter()
            quiet = cycle()
            quiet_ms = (time.perf_counter() - start) * 1000
            quiet_requests = len(requests)
            rows.append(("cycle, nothing moved", f"{len(everything)} watched repos, {len(quiet)} due",
                         f"{quiet_ms:.0f} ms, {quiet_requests} request(s) (target ≤ {TARGET_QUIET_MS:.0f} ms, 1 request)"))

            moved = [r for r in repos if len(sim.state.repos[str(r)].commits) > 1][:MOVED]
            for repo in moved:
                sim.advance(str(repo))
            offset[0] = timedelta(seconds=122)
            requests.clear()
            start = time.perf_counter()
            busy = cycle()
            news = [o for o in busy if isinstance(o, NewRevisions)]
            rows.append(("cycle, 5 repos moved", f"{len(everything)} watched, {len(busy)} polled, {len(news)} with a new revision",
                         f"{(time.perf_counter() - start) * 1000:.0f} ms, {len(requests)} requests "
                         f"({len(requests) - 1} for the moved repos + 1 listing)"))
        finally:
            full.close()
            live.close()
            sim.stop()
    table = Table(title="tracker polling (emulator over loopback HTTP, SQLite)")
    for column in ("case", "size", "measured"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    console.print(table)
    lines = ["# tracker polling", "", "`python -m benchmarks.tracker_poll`", "", "| case | size | measured |",
             "|---|---|---|", *[f"| {a} | {b} | {c} |" for a, b, c in rows], ""]
    RESULTS.write_text("\n".join(lines))
    ok = backfill_s <= TARGET_BACKFILL_S and quiet_requests <= 1 and quiet_ms <= TARGET_QUIET_MS and not failed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
