"""Backfill with the hub 50 ms away, against a sequential bare client fetching the same requests.

Every bundled history is backfilled by a poll cycle (real HTTP, the official client, diff,
estimate, advise, one transaction a revision) from the emulator in its latency mode (each answer
`--latency-ms` late, 50 by default: a hub across a continent). The baseline is the same requests,
in the same order, sent again one after another by a bare `httpx` client to the same emulator:
what a tracker that fetched one thing at a time would wait, before doing any work. Target (issue 32):
the backfill's wall time ≤ 0.35× the bare client's, measured in one run, within the hub's published
request quota. Beside it: CPU seconds per stored revision, hubwatch's process (every thread)
against the bare client's, and the backfill's requests per 5-minute window by the hub's buckets
(API, resolvers) against the published quotas (`QUOTAS`).

The emulator runs as its own process (`hubwatch hubsim`), as the hub is another machine: its work
is charged to neither side. Before the clock starts, one small repo is backfilled into a throwaway
store, the chat-template compiler's child is started and the cycle (with its hub client) is built,
as a daemon has them once per process. SQLite by default; `--database-url` names a PostgreSQL
server (a fresh database is made on it and dropped afterwards).
Run: `python -m benchmarks.backfill_floor [--database-url URL] [--latency-ms MS] [--runs N]`
(writes benchmarks/results/backfill_floor.md).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import NamedTuple

import sqlalchemy as sa

from benchmarks.tracker_poll import _root
from hubwatch.domain.records import RepoId
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import Failed, NewRevisions
from hubwatch.tracker.scheduler import PollCycle

__all__ = ["main"]

RESULTS = Path(__file__).resolve().parent / "results" / "backfill_floor.md"
TARGET = 0.35  # backfill wall time ≤ this × the sequential bare client's, the hub LATENCY_MS away
LATENCY_MS = 50
WINDOW_S = 300  # the hub's quotas are counted over 5-minute fixed windows
# The hub's published quotas per 5-minute window (https://huggingface.co/docs/hub/rate-limits,
# "Rate limit Tiers", September 2025): requests to /api/… ("API") and to …/resolve/… ("Resolvers").
QUOTAS = {"anonymous (per IP)": {"api": 500, "resolvers": 3000}, "free user": {"api": 1000, "resolvers": 5000}}


class Request(NamedTuple):
    """One request huggingface_hub sent: method, URL, the headers that shape the answer, when (monotonic s)."""

    method: str
    url: str
    headers: dict[str, str]
    at: float


@contextmanager
def recording() -> Iterator[list[Request]]:
    """Every request huggingface_hub sends: method, URL, the headers that shape the answer, when."""
    import httpx2
    from huggingface_hub.utils import set_client_factory  # type: ignore[attr-defined]
    from huggingface_hub.utils._http import default_client_factory, hf_request_event_hook

    seen: list[Request] = []

    def record(request: httpx2.Request) -> None:
        kept = {k: v for k, v in request.headers.items() if k.lower() in ("range", "authorization")}
        seen.append(Request(request.method, str(request.url), kept, time.monotonic()))

    set_client_factory(
        lambda: httpx2.Client(event_hooks={"request": [hf_request_event_hook, record]}, follow_redirects=True)
    )
    try:
        yield seen
    finally:
        set_client_factory(default_client_factory)


class Timed(NamedTuple):
    wall_s: float
    cpu_s: float  # this process, every thread


def floor(requests: list[Request]) -> Timed:
    """A bare client sending `requests` one after another and reading each answer: wall and CPU seconds."""
    import httpx2

    with httpx2.Client(follow_redirects=True) as client:
        start, cpu = time.perf_counter(), time.process_time()
        for request in requests:
            client.request(request.method, request.url, headers=request.headers).read()
        return Timed(time.perf_counter() - start, time.process_time() - cpu)


def bucket(url: str) -> str:
    """The hub's rate-limit bucket of a request: `resolvers` for …/resolve/…, `api` for /api/…."""
    from urllib.parse import urlsplit

    path = urlsplit(url).path
    return "resolvers" if "/resolve/" in path else "api" if path.startswith("/api/") else "pages"


def busiest_window(requests: list[Request], window_s: float = WINDOW_S) -> dict[str, int]:
    """Per bucket, the most requests sent within any `window_s` seconds (a sliding window, so at
    least what any fixed window of the hub's could count)."""
    busiest: dict[str, int] = {}
    for name in {bucket(r.url) for r in requests}:
        times = sorted(r.at for r in requests if bucket(r.url) == name)
        first, most = 0, 0
        for last, at in enumerate(times):
            while at - times[first] >= window_s:
                first += 1
            most = max(most, last - first + 1)
        busiest[name] = most
    return busiest


@contextmanager
def postgres_database(server: str) -> Iterator[str]:
    """A fresh database on `server`, dropped afterwards."""
    name = f"hubwatch_bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.engine.make_url(server).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def emulator(root: Path, latency_ms: int = 0) -> Iterator[str]:
    """`hubwatch hubsim --root ROOT` in its own process (each answer `latency_ms` late): its URL,
    stopped afterwards."""
    command = [sys.executable, "-m", "hubwatch", "hubsim", "--root", str(root), "--port", "0", "--log-level", "warning"]
    if latency_ms:
        command += ["--latency-ms", str(latency_ms)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line.startswith("hubsim listening on "):
            raise RuntimeError(f"the emulator did not start: {line!r}")
        yield line.removeprefix("hubsim listening on ")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _cycle(hub_url: str, store: Store, concurrency: int | None = None, claim_batch: int | None = None) -> PollCycle:
    settings = Settings(database_url="sqlite://", hub_endpoint=hub_url, poll_interval_s=60)
    if concurrency is not None:
        settings = settings.model_copy(update={"poll_concurrency": concurrency})
    if claim_batch is not None:
        settings = settings.model_copy(update={"claim_batch": claim_batch})
    return PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="bench")


class Backfill(NamedTuple):
    timed: Timed
    revisions: int
    failed: int
    requests: list[Request]


def backfill(
    hub_url: str, url: str, repos: list[RepoId], concurrency: int | None = None, claim_batch: int | None = None
) -> Backfill:
    """Backfill every repo into a fresh store at `url` (`concurrency`: repos polled together;
    `claim_batch`: the most repos held claimed at a time, which bounds `concurrency` too; the default
    settings when None): wall and CPU seconds, revisions stored, failures, the requests."""
    store = Store.open(url)
    try:
        for repo in repos:
            store.watch(repo)
        with recording() as requests:
            # The daemon builds its hub client and cycle once (`wiring.open_runtime`), not per cycle.
            cycle = _cycle(hub_url, store, concurrency, claim_batch)
            start, cpu = time.perf_counter(), time.process_time()
            outcomes = cycle()
            timed = Timed(time.perf_counter() - start, time.process_time() - cpu)
    finally:
        store.close()
    revisions = sum(len(o.shas) for o in outcomes if isinstance(o, NewRevisions))
    failed = sum(1 for o in outcomes if isinstance(o, Failed))
    return Backfill(timed, revisions, failed, list(requests))


def database_pages(path: Path) -> str:
    """One line on the SQLite store the backfill left: its pages in all, and the estimates' share
    (rows, distinct bodies, pages of both tables), from SQLite's `dbstat` after a VACUUM."""
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        pages = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall())
        rows = conn.execute("SELECT count(*) FROM estimates").fetchone()[0]
        bodies = conn.execute("SELECT count(*) FROM estimate_bodies").fetchone()[0]
    total = sum(pages.values())
    estimates = sum(v for k, v in pages.items() if "estimate" in k)
    return (f"SQLite store after the backfill: {total / 1024:.0f} KiB in all pages; estimates {estimates / 1024:.0f} KiB "
            f"({estimates / total:.0%}): {rows} estimates, {bodies} distinct bodies stored once each.")


def warm_up(hub_url: str, repo: RepoId, tmp: Path) -> None:
    """One repo backfilled into a throwaway store: every module a backfill uses is imported, and the
    chat-template compiler's child process is running (a daemon starts it once, at its first template)."""
    from hubwatch.diff.compile_worker import COMPILER

    backfill(hub_url, f"sqlite:///{tmp / 'warm.db'}", [repo])
    COMPILER.warm()


def bench_root(tmp: Path) -> tuple[Path, list[RepoId]]:
    """The emulator's root of curated histories under `tmp`, and the repos it holds (sorted)."""
    root = tmp / "root"
    root.mkdir()
    _root(root)
    return root, sorted({RepoId.parse(f.name.replace("__", "/")) for f in root.iterdir()})


def _row(label: str, run: Backfill, bare: Timed) -> str:
    ratio = run.timed.wall_s / bare.wall_s
    per = max(run.revisions, 1)
    window = busiest_window(run.requests)
    return (f"| {label} | {run.revisions} revisions, {run.failed} failed | {len(run.requests)} "
            f"({window.get('api', 0)} API, {window.get('resolvers', 0)} resolvers) | {run.timed.wall_s:.2f} s | "
            f"{bare.wall_s:.2f} s | **{ratio:.2f}×** (target ≤ {TARGET}×) | "
            f"{run.timed.cpu_s / per * 1000:.1f} ms vs {bare.cpu_s / per * 1000:.1f} ms "
            f"({run.timed.cpu_s / max(bare.cpu_s, 1e-9):.1f}×) |")


def _load() -> str:
    import os

    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.backfill_floor", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--database-url", help="a PostgreSQL server URL (a fresh database is made on it); default SQLite")
    parser.add_argument("--latency-ms", type=int, default=LATENCY_MS, help="how late the emulator answers each request")
    parser.add_argument("--runs", type=int, default=1, help="backfills, each against its own bare-client run")
    parser.add_argument("--concurrency", type=int, help="HUBWATCH_POLL_CONCURRENCY for the backfill (default: the setting's)")
    parser.add_argument("--claim-batch", type=int, help="HUBWATCH_CLAIM_BATCH for the backfill (default: the setting's)")
    args = parser.parse_args(argv)
    rows: list[str] = []
    ratios: list[float] = []
    loads = [_load()]
    with tempfile.TemporaryDirectory() as tmp:
        root, repos = bench_root(Path(tmp))
        server = args.database_url
        backend = "postgresql" if server else "sqlite"
        with emulator(root, args.latency_ms) as hub_url:
            warm_up(hub_url, repos[0], Path(tmp))
            for n in range(args.runs):
                pg: AbstractContextManager[str | None] = postgres_database(server) if server else nullcontext()
                with pg as pg_url:
                    url = pg_url or f"sqlite:///{Path(tmp) / f'bench{n}.db'}"
                    run = backfill(hub_url, url, repos, args.concurrency, args.claim_batch)
                bare = floor(run.requests)
                ratios.append(run.timed.wall_s / bare.wall_s)
                ok = not run.failed
                rows.append(_row(f"{backend}, hub {args.latency_ms} ms away, run {n + 1}", run, bare)
                            + ("" if ok else " FAILED REPOS"))
        loads.append(_load())
        sizes = "" if server else database_pages(Path(tmp) / "bench0.db")
    defaults = Settings()
    concurrency, claim_batch = args.concurrency or defaults.poll_concurrency, args.claim_batch or defaults.claim_batch
    quota = "; ".join(f"{tier}: {q['api']:,} API, {q['resolvers']:,} resolvers" for tier, q in QUOTAS.items())
    lines = ["# backfill with the hub far away, against a sequential bare client", "",
             f"`python -m benchmarks.backfill_floor{' --database-url URL' if server else ''}"
             f"{f' --latency-ms {args.latency_ms}' if args.latency_ms != LATENCY_MS else ''}"
             f"{f' --runs {args.runs}' if args.runs != 1 else ''}"
             f"{f' --concurrency {args.concurrency}' if args.concurrency else ''}"
             f"{f' --claim-batch {args.claim_batch}' if args.claim_batch else ''}` "
             f"({len(repos)} repos; HUBWATCH_POLL_CONCURRENCY {concurrency}, HUBWATCH_CLAIM_BATCH {claim_batch}; "
             f"{loads[0]} before, {loads[1]} after)", "",
             "| store | stored | requests (busiest 5 min: by bucket) | backfill | bare client, same requests, one after another | "
             "ratio | CPU per stored revision, hubwatch vs bare client |",
             "|---|---|---|---|---|---|---|", *rows, "",
             f"Published quotas per 5-minute window ({quota}; https://huggingface.co/docs/hub/rate-limits).", "",
             *([sizes, ""] if sizes else [])]
    text = "\n".join(lines)
    print(text)
    RESULTS.write_text(text)
    return 0 if all(r <= TARGET for r in ratios) else 1


if __name__ == "__main__":
    sys.exit(main())
