"""Latency of the web app's read paths over a SQLite store of 400 revisions (10 repos × 40).

Targets (median, one request through FastAPI's TestClient, SQLite file): a model's Atom feed
≤ 50 ms, the global feed ≤ 80 ms, a model page ≤ 150 ms, `POST /v1/query` by commit ≤ 20 ms,
`POST /v1/querybatch` of 100 commits ≤ 500 ms, a pin badge ≤ 20 ms.
Run: `python -m benchmarks.web_speed` (writes benchmarks/results/web_speed.md).
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient
from rich.console import Console
from rich.table import Table

from benchmarks.timing import p50_ms
from hubwatch.feeds import create_app
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, FileRecord, Kind, RepoId, RevisionRecord, Severity

REPOS, REVISIONS, RUNS = 10, 40, 30
RESULTS = Path(__file__).parent / "results" / "web_speed.md"


def _advisory(repo: RepoId, sha: str, when: datetime) -> AdvisoryRecord:
    url = repo.url()
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    adv_id = f"x_HUBWATCH-{when.year}-{hashlib.sha256(f'{repo}@{sha}'.encode()).hexdigest()[:12]}"
    osv = {"schema_version": "1.7.5", "id": adv_id, "modified": stamp, "published": stamp,
           "summary": f"{repo}: eos changed",
           "affected": [{"package": {"ecosystem": "GIT", "name": url},
                         "ranges": [{"type": "GIT", "repo": url, "events": [{"introduced": sha}]}]}],
           "database_specific": {"max_severity": "high"}}
    return AdvisoryRecord(adv_id, repo, sha, osv, when)


def _fill(store: Store) -> dict[RepoId, list[str]]:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    shas: dict[RepoId, list[str]] = {}
    for r in range(REPOS):
        repo = RepoId(f"org{r % 3}", f"model-{r}")
        store.watch(repo)
        parent = None
        for i in range(REVISIONS):
            sha = hashlib.sha1(f"{repo}/{i}".encode()).hexdigest()
            when = start + timedelta(hours=i * REPOS + r)
            changes = [
                ChangeRecord(Kind.SPECIAL_TOKENS, Severity.HIGH, "generation_config.json:eos_token_id",
                             f"eos_token_id {i} → {i + 1}", {"file": "generation_config.json", "key": "eos_token_id",
                                                             "old": i, "new": i + 1}),
                ChangeRecord(Kind.METADATA, Severity.INFO, "config.json:transformers_version", "4.40 → 4.41",
                             {"file": "config.json", "key": "transformers_version", "old": "4.40", "new": "4.41"}),
            ]
            body = f'{{"model_type": "llama", "rev": {i}}}'.encode()
            revision = RevisionRecord(sha, parent, when, f"Update {i}")
            advisories = [_advisory(repo, sha, when)] if i % 4 == 1 else []
            store.save_revision(repo, revision, [FileRecord("config.json", len(body))], {"config.json": body},
                                changes, ("bench", {"params": {"derived": 7_000_000_000 + i}}), advisories)
            shas.setdefault(repo, []).append(sha)
            parent = sha
    return shas


def main() -> int:
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(f"sqlite:///{tmp}/bench.db")
        with console.status(f"filling a store with {REPOS * REVISIONS} revisions…"):
            shas = _fill(store)
        client = TestClient(create_app(Settings(database_url="sqlite://"), store))
        repo = next(iter(shas))
        head = shas[repo][-1]
        batch = {"queries": [{"commit": s} for r in shas for s in shas[r][:10]]}
        checks: list[tuple[str, Callable[[], object], float]] = [
            ("model feed.atom", lambda: client.get(f"/models/{repo}/feed.atom"), 50),
            ("global feed.atom", lambda: client.get("/feed.atom"), 80),
            ("model page (HTML)", lambda: client.get(f"/models/{repo}"), 150),
            ("POST /v1/query (commit)", lambda: client.post("/v1/query", json={"commit": head}), 20),
            ("POST /v1/querybatch (100)", lambda: client.post("/v1/querybatch", json=batch), 500),
            ("pin badge", lambda: client.get(f"/badges/{repo}/revisions/{head}.json"), 20),
        ]
        rows = [(name, p50_ms(call, RUNS), target) for name, call, target in checks]
        store.close()
    table = Table(title=f"web app, {REPOS * REVISIONS} revisions in SQLite (median of {RUNS})")
    for column in ("request", "median ms", "target ms", "ok"):
        table.add_column(column)
    lines = ["# web_speed", "", f"{REPOS * REVISIONS} revisions in SQLite, median of {RUNS} requests.", "",
             "| request | median ms | target ms | ok |", "|---|---|---|---|"]
    for name, ms, target in rows:
        ok = "yes" if ms <= target else "NO"
        table.add_row(name, f"{ms:.1f}", f"{target:.0f}", ok)
        lines.append(f"| {name} | {ms:.1f} | {target:.0f} | {ok} |")
    console.print(table)
    RESULTS.write_text("\n".join(lines) + "\n")
    return 0 if all(ms <= target for _, ms, target in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
