"""Backfill through the emulator against its request floor, on SQLite and PostgreSQL.

Every bundled history is backfilled by a poll cycle (real HTTP, the official client, diff,
estimate, advise, one transaction a revision). The floor is the same requests, in the same order,
sent again by a bare `httpx` client to the same emulator: what no tracker can beat. Targets:
backfill ≤ 2× the floor on SQLite, ≤ 2.5× on PostgreSQL (each ratio measured in one run).
PostgreSQL runs when `HUBWATCH_TEST_POSTGRES_URL` (or the first argument) names a server.
Run: `python -m benchmarks.backfill_floor [POSTGRES_URL]` (writes benchmarks/results/backfill_floor.md).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import timedelta
from pathlib import Path

import sqlalchemy as sa

from benchmarks.tracker_poll import _cycle, _root
from hubwatch.domain.records import RepoId
from hubwatch.hubsim import HubSim
from hubwatch.storage import Store
from hubwatch.tracker.poller import Failed, NewRevisions

__all__ = ["main"]

RESULTS = Path(__file__).resolve().parent / "results" / "backfill_floor.md"
TARGETS = {"sqlite": 2.0, "postgresql": 2.5}


@contextmanager
def recording() -> Iterator[list[tuple[str, str, dict[str, str]]]]:
    """Every request huggingface_hub sends: method, URL and the headers that shape the answer."""
    import httpx2
    from huggingface_hub.utils import set_client_factory  # type: ignore[attr-defined]
    from huggingface_hub.utils._http import default_client_factory, hf_request_event_hook

    seen: list[tuple[str, str, dict[str, str]]] = []

    def record(request: httpx2.Request) -> None:
        kept = {k: v for k, v in request.headers.items() if k.lower() in ("range", "authorization")}
        seen.append((request.method, str(request.url), kept))

    set_client_factory(
        lambda: httpx2.Client(event_hooks={"request": [hf_request_event_hook, record]}, follow_redirects=True)
    )
    try:
        yield seen
    finally:
        set_client_factory(default_client_factory)


def floor(requests: list[tuple[str, str, dict[str, str]]]) -> float:
    """Seconds a bare client takes to send `requests` one after another and read each answer."""
    import httpx2

    with httpx2.Client(follow_redirects=True) as client:
        start = time.perf_counter()
        for method, url, headers in requests:
            client.request(method, url, headers=headers).read()
        return time.perf_counter() - start


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


def backfill(sim: HubSim, url: str, repos: list[RepoId]) -> tuple[float, int, int, list[tuple[str, str, dict[str, str]]]]:
    """Backfill every repo into a fresh store at `url`: seconds, revisions, failures, the requests."""
    sim.reset(at=None)
    store = Store.open(url)
    try:
        for repo in repos:
            store.watch(repo)
        with recording() as requests:
            start = time.perf_counter()
            outcomes = _cycle(sim, store, [timedelta()])()
            took = time.perf_counter() - start
    finally:
        store.close()
    revisions = sum(len(o.shas) for o in outcomes if isinstance(o, NewRevisions))
    failed = sum(1 for o in outcomes if isinstance(o, Failed))
    return took, revisions, failed, list(requests)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    server = args[0] if args else os.environ.get("HUBWATCH_TEST_POSTGRES_URL")
    rows: list[str] = []
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        _root(root)
        repos = sorted({RepoId.parse(f.name.replace("__", "/")) for f in root.iterdir()})
        sim = HubSim(root, at=None).start()
        try:
            backends: list[tuple[str, str]] = [("sqlite", f"sqlite:///{Path(tmp) / 'bench.db'}")]
            pg_context: AbstractContextManager[str | None] = postgres_database(server) if server else nullcontext()
            with pg_context as pg:
                if pg:
                    backends.append(("postgresql", pg))
                for backend, url in backends:
                    took, revisions, failed, requests = backfill(sim, url, repos)
                    bare = floor(requests)
                    ratio = took / bare
                    ok = ok and ratio <= TARGETS[backend] and not failed
                    rows.append(f"| {backend} | {len(repos)} repos, {revisions} revisions, {failed} failed | "
                                f"{len(requests)} | {took:.2f} s | {bare:.2f} s | {ratio:.2f}× (target ≤ {TARGETS[backend]}×) |")
        finally:
            sim.stop()
    lines = ["# backfill against the request floor", "",
             "`python -m benchmarks.backfill_floor` (PostgreSQL from `HUBWATCH_TEST_POSTGRES_URL`)", "",
             "| store | size | requests | backfill | floor (bare client, same requests) | ratio |",
             "|---|---|---|---|---|---|", *rows, ""]
    text = "\n".join(lines)
    print(text)
    RESULTS.write_text(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
