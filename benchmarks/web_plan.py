"""Time of `/plan` and the estimate panel: a pasted config.json estimated (form POST), a watched repo's stored
revision estimated (GET /plan?repo=…), and the JSON API, each uncached (every request a new config or new
settings) and cached (the same request again).

Requests go through FastAPI's TestClient in-process (no network), so the time is the server's work
plus the client's small share; the store is a SQLite file with one watched repo per config.
Target: a pasted config estimated ≤ 50 ms (median), uncached. Configs: Llama-2-7b (dense), WizardLM-2-8x22B
(Mixtral MoE), DeepSeek-R1 (MLA + MoE, 61 layers).
Run: `python -m benchmarks.web_plan` (writes benchmarks/results/web_plan.md).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from fastapi.testclient import TestClient
from rich.console import Console
from rich.table import Table

from hubwatch.domain.records import FileRecord, RepoId, RevisionRecord
from hubwatch.feeds import create_app
from hubwatch.settings import Settings
from hubwatch.storage import Store

__all__ = ["main"]

RUNS = 30
TARGET_MS = 50.0
CONFIGS = Path(__file__).parents[1] / "tests" / "data" / "configs"
MODELS = ("meta-llama__Llama-2-7b-hf", "alpindale__WizardLM-2-8x22B", "deepseek-ai__DeepSeek-R1")
RESULTS = Path(__file__).parent / "results" / "web_plan.md"


def _median_ms(call: Callable[[int], object]) -> float:
    call(-1)  # warm
    times = []
    for i in range(RUNS):
        t0 = time.perf_counter()
        call(i)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def _ok(response: object) -> object:
    status = getattr(response, "status_code", None)
    if status != 200:
        raise SystemExit(f"request failed: {status} {getattr(response, 'text', '')[:300]}")
    return response


def main() -> int:
    console = Console()
    rows: list[tuple[str, str, float, float | None]] = []
    counter = itertools.count()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(f"sqlite:///{tmp}/bench.db")
        client = TestClient(create_app(Settings(database_url="sqlite://"), store))
        for name in MODELS:
            config = json.loads((CONFIGS / name / "config.json").read_text())
            repo = RepoId(*name.split("__"))
            body = json.dumps(config).encode()
            store.watch(repo)
            sha = hashlib.sha1(name.encode()).hexdigest()
            store.save_revision(repo, RevisionRecord(sha, None, datetime(2025, 1, 1, tzinfo=UTC), "init"),
                                [FileRecord("config.json", len(body))], {"config.json": body}, [], None, [])

            def paste(i: int, config: dict[str, object] = config) -> object:
                # A key the estimator ignores makes every request a new config (no cache hit).
                fresh = {**config, "bench_request": next(counter)} if i >= 0 else config
                return _ok(client.post("/plan", data={"config": json.dumps(fresh)}))

            def paste_cached(_i: int, text: str = json.dumps(config)) -> object:
                return _ok(client.post("/plan", data={"config": text}))

            def stored(i: int, repo: RepoId = repo) -> object:
                # A new sequence length each time: a new (revision, settings) key.
                return _ok(client.get(f"/plan?repo={repo}&seq_len={512 + next(counter)}"))

            def api(i: int, config: dict[str, object] = config) -> object:
                return _ok(client.post("/api/v1/plan", json={"config": config, "settings": {"batch": 1 + i % 8}}))

            label = repo.name
            rows.append((label, "POST /plan, pasted config (uncached)", _median_ms(paste), TARGET_MS))
            rows.append((label, "POST /plan, same config again (cached)", _median_ms(paste_cached), None))
            rows.append((label, "GET /plan?repo=… stored revision (uncached)", _median_ms(stored), None))
            rows.append((label, "POST /api/v1/plan, config (JSON, every node)", _median_ms(api), None))
        store.close()
    table = Table(title=f"/plan and the estimate panel (median of {RUNS}, in-process)")
    for column in ("model", "request", "median ms", "target ms", "ok"):
        table.add_column(column)
    lines = ["# web_plan", "", f"Median of {RUNS} requests through FastAPI's TestClient (in-process, SQLite file); "
             "uncached: every request a new config or new settings.", "",
             "| model | request | median ms | target ms | ok |", "|---|---|---|---|---|"]
    for label, name, ms, target in rows:
        ok = "" if target is None else ("yes" if ms <= target else "NO")
        shown = "" if target is None else f"{target:.0f}"
        table.add_row(label, name, f"{ms:.1f}", shown, ok)
        lines.append(f"| {label} | {name} | {ms:.1f} | {shown} | {ok} |")
    console.print(table)
    RESULTS.write_text("\n".join(lines) + "\n")
    return 0 if all(target is None or ms <= target for _, _, ms, target in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
