"""Reads that do not grow with history depth, timed through uvicorn over loopback.

A SQLite store holds a 1,000-revision repo (`--depth N` for another depth; the targets are set at
1,000) and a 12-revision repo (an advisory every 4th revision).
The web app runs as a user deploys it, `hubwatch serve --workers N` (uvicorn, N processes sharing
the port; N = the machine's cores unless `--workers` says otherwise); an httpx client times, in one run:

- the model page and `POST /v1/query` by a mid-history commit, p50, deep vs shallow (target ≤ 2×);
- that commit's revision page and its standing (`/api/v1/models/…/revisions/SHA/standing`), the same way;
- the index page narrowed to the repo by name (`/?q=ORG`: its newest change), the same way;
- `/healthz` p50 while eight deep model-page requests run, vs idle (target ≤ 5×);
- model-page requests per second at concurrency 16 vs 1 (target ≥ 3×).

With `--rewritten` both repos had a force-push a third of the way up (recorded as the tracker
records it, before the new line is stored: three revisions left the main line), so every read takes
the non-linear paths; two rows are added, the revision page and the standing of a commit the
force-push dropped (target ≤ 2× too), and the results go to benchmarks/results/web_depth_rewritten.md.

Run: `python -m benchmarks.web_depth [--workers N] [--depth N] [--database-url URL] [--rewritten]`
(writes benchmarks/results/web_depth.md).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from benchmarks.deep_history import START, advisory, sha_at
from benchmarks.timing import p50_ms
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, FileRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.advisories.reconcile import ADVISORY_MODEL
from hubwatch.storage import Store
from hubwatch.tracker.rederive import MODEL_KEY

__all__ = ["main"]

DEEP, SHALLOW = RepoId("deep", "model"), RepoId("shallow", "model")
DEPTHS = {DEEP: 1000, SHALLOW: 12}
RUNS, THROUGHPUT_S = 40, 4.0
RESULTS = Path(__file__).parent / "results" / "web_depth.md"
REWRITTEN_RESULTS = Path(__file__).parent / "results" / "web_depth_rewritten.md"
REWRITTEN = False  # `--rewritten`: a force-push a third of the way up each history
WORKERS = os.cpu_count() or 1  # `hubwatch serve --workers N`: one web process per core, as deployed


def _advisory(repo: RepoId, sha: str, fix: str, when: datetime) -> AdvisoryRecord:
    """A hazard introduced at `sha` and fixed two revisions later (a pin carries at most one at any depth)."""
    return advisory(repo, sha, when, [{"introduced": sha}, {"fixed": fix}], f"{repo}: eos changed", prose=False)


def _fill(store: Store) -> None:
    # the store is current (as the tracker leaves it): `serve` re-derives nothing at start-up
    store.set_meta(MODEL_KEY, str(ADVISORY_MODEL))
    for repo, depth in DEPTHS.items():
        store.watch(repo)
        parent = None
        for i in range(depth):
            sha, when = sha_at(repo, i), START + timedelta(hours=i)
            if REWRITTEN and i == _fork(depth) + 1:  # upstream force-pushed onto an older commit
                assert parent is not None
                store.revisions.record_rewrite(repo, parent, sha, [sha_at(repo, k) for k in _dropped(depth)], when)
                parent = sha_at(repo, _fork(depth) - 3)
            changes = [ChangeRecord(Kind.SPECIAL_TOKENS, Severity.HIGH, "generation_config.json:eos_token_id",
                                    f"eos_token_id {i} → {i + 1}", {"file": "generation_config.json",
                                                                    "key": "eos_token_id", "old": i, "new": i + 1})]
            body = f'{{"model_type": "llama", "rev": {i}}}'.encode()
            advisories = [_advisory(repo, sha, sha_at(repo, i + 2), when)] if i % 4 == 1 else []
            store.save_revision(repo, RevisionRecord(sha, parent, when, f"Update {i}"),
                                [FileRecord("config.json", len(body))], {"config.json": body}, changes,
                                ("bench", {"params": {"derived": 7_000_000_000 + i}}), advisories)
            parent = sha


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _client(base: str, path: str, start_at: float, stop_at: float, results: Any) -> None:
    """One client process: from `start_at` asks `path` in a loop until `stop_at` (wall clock), then
    puts how many answers it read. A process each, so that the clients never wait for one another's
    interpreter lock (a monitor or a browser is its own process too)."""
    with httpx.Client(base_url=base, timeout=60) as c:
        c.get("/healthz")  # connected before the clock starts
        time.sleep(max(0.0, start_at - time.time()))
        done = 0
        while time.time() < stop_at:
            c.get(path).raise_for_status()
            done += 1
    results.put(done)


def _throughput(base: str, path: str, clients: int) -> float:
    """Requests per second with `clients` client processes each asking `path` in a loop for THROUGHPUT_S."""
    ctx = multiprocessing.get_context("fork")  # no import in the children: the clock starts with them ready
    results = ctx.Queue()
    start_at = time.time() + 3.0  # every client process started and connected
    procs = [ctx.Process(target=_client, args=(base, path, start_at, start_at + THROUGHPUT_S, results))
             for _ in range(clients)]  # fmt: skip
    for proc in procs:
        proc.start()
    done = sum(int(results.get(timeout=120)) for _ in procs)
    for proc in procs:
        proc.join()
    return done / THROUGHPUT_S


def _healthz_under_load(base: str, client: httpx.Client, path: str) -> float:
    """`/healthz` p50 while eight client processes keep asking `path` (the deep model page)."""
    ctx = multiprocessing.get_context("fork")  # no import in the children: the clock starts with them ready
    results = ctx.Queue()
    start_at = time.time() + 3.0
    procs = [ctx.Process(target=_client, args=(base, path, start_at, start_at + 600, results)) for _ in range(8)]
    for proc in procs:
        proc.start()
    time.sleep(max(0.0, start_at - time.time()) + 0.5)
    try:
        return p50_ms(lambda: client.get("/healthz"), RUNS)
    finally:
        for proc in procs:
            proc.terminate()
            proc.join()


def _fork(depth: int) -> int:
    return depth // 3


def _dropped(depth: int) -> range:
    return range(_fork(depth) - 2, _fork(depth) + 1)


def _measure(base: str) -> list[tuple[str, float, float, float, str]]:
    """(what, deep or loaded, shallow or idle, ratio, target) rows."""
    rows = []
    with httpx.Client(base_url=base, timeout=60) as client:
        page: dict[RepoId, float] = {}
        query: dict[RepoId, float] = {}
        revision: dict[RepoId, float] = {}
        standing: dict[RepoId, float] = {}
        listed: dict[RepoId, float] = {}
        dropped_page: dict[RepoId, float] = {}
        dropped_standing: dict[RepoId, float] = {}
        for repo, depth in DEPTHS.items():
            assert client.get(f"/models/{repo}").status_code == 200
            # a commit in the middle of the history that carries one advisory (introduced there,
            # i % 4 == 1), in both repos: the two answers are the same size
            middle = depth // 2
            pin = sha_at(repo, middle - middle % 4 + 1)
            mid = {"commit": pin}
            for path in (f"/models/{repo}/revisions/{pin}", f"/api/v1/models/{repo}/revisions/{pin}/standing"):
                assert client.get(path).status_code == 200, path
            page[repo] = p50_ms(lambda r=repo: client.get(f"/models/{r}"), RUNS)  # type: ignore[misc]
            query[repo] = p50_ms(lambda m=mid: client.post("/v1/query", json=m), RUNS)  # type: ignore[misc]
            revision[repo] = p50_ms(lambda r=repo, c=pin: client.get(f"/models/{r}/revisions/{c}"), RUNS)  # type: ignore[misc]
            standing[repo] = p50_ms(
                lambda r=repo, c=pin: client.get(f"/api/v1/models/{r}/revisions/{c}/standing"), RUNS)  # type: ignore[misc]
            assert repo.org in client.get(f"/?q={repo.org}").text  # the index, narrowed to this repo
            listed[repo] = p50_ms(lambda r=repo: client.get(f"/?q={r.org}"), RUNS)  # type: ignore[misc]
            if REWRITTEN:
                gone = sha_at(repo, _dropped(depth)[1])
                assert client.get(f"/api/v1/models/{repo}/revisions/{gone}/standing").json()["on_main_line"] is False
                dropped_page[repo] = p50_ms(
                    lambda r=repo, c=gone: client.get(f"/models/{r}/revisions/{c}"), RUNS)  # type: ignore[misc]
                dropped_standing[repo] = p50_ms(
                    lambda r=repo, c=gone: client.get(f"/api/v1/models/{r}/revisions/{c}/standing"), RUNS)  # type: ignore[misc]
        rows.append((f"model page p50 ms ({DEPTHS[DEEP]:,} vs 12 revisions)", page[DEEP], page[SHALLOW],
                     page[DEEP] / page[SHALLOW], "≤ 2×"))
        rows.append((f"/v1/query mid-history commit p50 ms ({DEPTHS[DEEP]:,} vs 12)", query[DEEP], query[SHALLOW],
                     query[DEEP] / query[SHALLOW], "≤ 2×"))
        rows.append((f"revision page of that commit p50 ms ({DEPTHS[DEEP]:,} vs 12)", revision[DEEP], revision[SHALLOW],
                     revision[DEEP] / revision[SHALLOW], "≤ 2×"))
        rows.append((f"its standing (`/api/v1/…/standing`) p50 ms ({DEPTHS[DEEP]:,} vs 12)", standing[DEEP], standing[SHALLOW],
                     standing[DEEP] / standing[SHALLOW], "≤ 2×"))
        rows.append((f"index page narrowed to the repo (`/?q=ORG`) p50 ms ({DEPTHS[DEEP]:,} vs 12)", listed[DEEP], listed[SHALLOW],
                     listed[DEEP] / listed[SHALLOW], "≤ 2×"))
        if REWRITTEN:
            rows.append((f"revision page of a dropped commit p50 ms ({DEPTHS[DEEP]:,} vs 12)", dropped_page[DEEP],
                         dropped_page[SHALLOW], dropped_page[DEEP] / dropped_page[SHALLOW], "≤ 2×"))
            rows.append((f"its standing p50 ms ({DEPTHS[DEEP]:,} vs 12)", dropped_standing[DEEP],
                         dropped_standing[SHALLOW], dropped_standing[DEEP] / dropped_standing[SHALLOW], "≤ 2×"))
        idle = p50_ms(lambda: client.get("/healthz"), RUNS)
        loaded = _healthz_under_load(base, client, f"/models/{DEEP}")
        rows.append(("/healthz p50 ms (8 deep requests running vs idle)", loaded, idle, loaded / idle, "≤ 5×"))
    one = _throughput(base, f"/models/{DEEP}", 1)
    many = _throughput(base, f"/models/{DEEP}", 16)
    rows.append(("deep model page req/s (concurrency 16 vs 1)", many, one, many / one, "≥ 3×"))
    return rows


def main(argv: list[str] | None = None) -> int:
    global WORKERS, REWRITTEN
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", type=int, default=WORKERS, help="web processes (default: the cores)")
    parser.add_argument("--depth", type=int, default=DEPTHS[DEEP], help="revisions of the deep repo (default 1,000)")
    parser.add_argument("--database-url", default=None, metavar="URL",
                        help="an empty database to fill and serve (default: a SQLite file in a temporary folder)")
    parser.add_argument("--rewritten", action="store_true",
                        help="a force-push a third of the way up each history (results: web_depth_rewritten.md)")
    args = parser.parse_args(argv)
    WORKERS, REWRITTEN = args.workers, args.rewritten
    DEPTHS[DEEP] = args.depth
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite:///{tmp}/depth.db"
        with Store.open(url) as store:
            _fill(store)
        port = _free_port()
        env = {**os.environ, "HUBWATCH_DATABASE_URL": url, "HUBWATCH_HOST": "127.0.0.1", "HUBWATCH_PORT": str(port)}
        server = subprocess.Popen([sys.executable, "-m", "hubwatch", "serve", "--workers", str(WORKERS)], env=env)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60  # every worker imports the app and opens the store
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{base}/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            rows = _measure(base)
        finally:
            server.terminate()
            server.wait()
    backend = "PostgreSQL" if args.database_url and args.database_url.startswith("postgresql") else "SQLite"
    shape = "; both histories force-pushed a third of the way up (`--rewritten`)" if REWRITTEN else ""
    lines = ["# web_depth" + (" (rewritten)" if REWRITTEN else ""), "",
             f"`hubwatch serve --workers {WORKERS}` (uvicorn) over loopback, {backend}{shape}; {os.cpu_count()} cores; "
             f"p50 of {RUNS} requests; throughput over {THROUGHPUT_S:.0f} s. One run.", "",
             "| measure | deep / loaded / 16 | shallow / idle / 1 | ratio | target | ok |", "|---|---|---|---|---|---|"]
    ok_all = True
    for what, a, b, ratio, target in rows:
        ok = ratio >= 3 if target.startswith("≥") else ratio <= float(target.split()[1].rstrip("×"))
        ok_all &= ok
        lines.append(f"| {what} | {a:.1f} | {b:.1f} | {ratio:.2f}× | {target} | {'yes' if ok else 'NO'} |")
    print("\n".join(lines))
    (REWRITTEN_RESULTS if REWRITTEN else RESULTS).write_text("\n".join(lines) + "\n")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
