"""Server time of the compare page (`/models/ORG/NAME/compare/BASE...HEAD`) and its JSON twin on a
1,000-revision repo: the seven real versions of Reflection-Llama-3.1-70B (config, generation config,
a 56 KB tokenizer_config.json with its chat template, the 60 KB weight index), then 993 revisions
that move generation_config's temperature. Each compare rebuilds both snapshots from the store, runs
the diff engine (chat templates rendered in the sandbox), reads both estimates and both standings.

Requests go through FastAPI's TestClient in-process (no network): the server's work plus the
client's small share; the store is a SQLite file. Target: ≤ 50 ms (median) per compare.
Run: `python -m benchmarks.web_compare` (writes benchmarks/results/web_compare.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient
from rich.console import Console
from rich.table import Table

from hubwatch.diff import diff_snapshots
from hubwatch.domain.records import FileRecord, RepoId, RevisionRecord
from hubwatch.domain.snapshot import Snapshot
from hubwatch.estimator.memory.report import estimate_revision
from hubwatch.feeds import create_app
from hubwatch.feeds.builders.compare import DiffCache
from hubwatch.settings import Settings
from hubwatch.storage import Store

__all__ = ["main"]

RUNS = 15
TARGET_MS = 50.0
REVISIONS = 1000
HISTORY = Path(__file__).parents[1] / "tests" / "data" / "histories" / "mattshumer__Reflection-Llama-3.1-70B"
REPO = RepoId("mattshumer", "Reflection-Llama-3.1-70B")
RESULTS = Path(__file__).parent / "results" / "web_compare.md"


def _versions() -> list[dict[str, bytes]]:
    folders = sorted((p for p in HISTORY.iterdir() if p.is_dir()), key=lambda p: int(p.name[1:]))
    return [{f.name: f.read_bytes() for f in sorted(folder.iterdir())} for folder in folders]


def _seed(store: Store) -> list[str]:
    """The history, oldest first, saved as the tracker saves it (changes from the diff engine)."""
    store.watch(REPO)
    contents = _versions()
    last = contents[-1]
    generation = json.loads(last["generation_config.json"])
    while len(contents) < REVISIONS:
        generation["temperature"] = round(0.5 + len(contents) / 10_000, 4)
        contents.append({**last, "generation_config.json": json.dumps(generation).encode()})
    shas: list[str] = []
    previous: Snapshot | None = None
    start = datetime(2024, 9, 5, tzinfo=UTC)
    for i, files in enumerate(contents):
        sha = hashlib.sha1(f"{REPO}:{i}".encode()).hexdigest()
        listing = {p: FileRecord(p, len(b)) for p, b in files.items()}
        snapshot = Snapshot(sha, listing, files)
        estimate = None
        if i in (0, 6, len(contents) - 1):
            estimate = ("bench", estimate_revision(json.loads(files["config.json"])).to_json())
        revision = RevisionRecord(sha, shas[-1] if shas else None, start + timedelta(hours=i), f"v{i + 1}")
        store.save_revision(REPO, revision, list(listing.values()), files, diff_snapshots(previous, snapshot),
                            estimate, [])
        shas.append(sha)
        previous = snapshot
    return shas


def _median_ms(client: TestClient, url: str, cached: bool) -> float:
    """Median time of `url`; uncached: the app's diff cache emptied before each request, so the
    diff engine runs every time (what the first visitor of a pair waits)."""
    response = client.get(url)
    if response.status_code != 200:
        raise SystemExit(f"{url}: {response.status_code} {response.text[:300]}")
    times = []
    for _ in range(RUNS):
        if not cached:
            client.app.state.compare_diffs = DiffCache()  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        client.get(url)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> int:
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(f"sqlite:///{tmp}/bench.db")
        shas = _seed(store)
        client = TestClient(create_app(Settings(database_url="sqlite://"), store))
        page = f"/models/{REPO}/compare"
        cases = [
            ("v1...v7: chat template, weight index, config (rendered in the sandbox)", f"{page}/{shas[0][:7]}...{shas[6][:7]}"),
            ("v6...v7: adjacent revisions", f"{page}/{shas[5][:7]}...{shas[6][:7]}"),
            (f"v1...v{REVISIONS}: the ends of the history", f"{page}/{shas[0][:7]}...{shas[-1][:7]}"),
            (f"v{REVISIONS}...v1: backwards", f"{page}/{shas[-1][:7]}...{shas[0][:7]}"),
            (f"JSON v1...v{REVISIONS}", f"/api/v1/models/{REPO}/compare/{shas[0][:7]}...{shas[-1][:7]}"),
        ]
        rows = [(label, _median_ms(client, url, False), _median_ms(client, url, True)) for label, url in cases]
        store.close()
    table = Table(title=f"compare page, median of {RUNS} (target ≤ {TARGET_MS:.0f} ms)")
    for column in ("compare", "uncached ms", "cached ms", "target (uncached)"):
        table.add_column(column)
    lines = [f"# Compare page server time ({REVISIONS:,}-revision repo)", "",
             f"`python -m benchmarks.web_compare`; median of {RUNS} requests through TestClient, SQLite file.",
             "Uncached: the diff engine runs on every request (the app's diff cache emptied first); cached: the",
             "same pair again (the diff of two stored shas never changes; estimates and advisories are read afresh).",
             f"Load average when run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (a shared machine inflates"
             " every figure).", "",
             "| compare | uncached ms | cached ms | ≤ 50 ms uncached |", "|---|---:|---:|---|"]
    for label, cold, warm in rows:
        met = "met" if cold <= TARGET_MS else "not met"
        table.add_row(label, f"{cold:.1f}", f"{warm:.1f}", met)
        lines.append(f"| {label} | {cold:.1f} | {warm:.1f} | {met} |")
    console.print(table)
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0 if all(cold <= TARGET_MS for _, cold, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
