"""Speed and dedup of the store on SQLite (and PostgreSQL with --postgres URL).

Replays the 22 real histories (every version's files stored as a revision, with changes, an
estimate and an advisory), then times the reads the web app and the scheduler make.
Targets (SQLite, this 2-core machine): save_revision median ≤ 50 ms; history() of a repo ≤ 50 ms;
advisories_affecting ≤ 20 ms; recent_changes(50) ≤ 50 ms; claim_due(100) among 10,000 repos
≤ 200 ms; stored blob bytes ≤ 50% of the raw content bytes saved (dedup + zlib). The whole
database (every table and index: the SQLite file's pages in use, or the PostgreSQL tables with their
indexes and TOAST) against the same raw bytes is reported beside it; the estimates stored here are
small stand-ins, so a tracker's store (full estimates) is larger.
Run: `python -m benchmarks.storage_speed [--postgres postgresql://postgres@127.0.0.1:5432/test]`
(writes benchmarks/results/storage_speed.md).
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from hubwatch.storage import Store
from hubwatch.domain.records import (
    AdvisoryRecord,
    ChangeRecord,
    Direction,
    FileRecord,
    Kind,
    RepoId,
    RevisionRecord,
    Severity,
)
from rich.console import Console
from rich.progress import track
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = [ROOT / "tests" / "data" / "histories", ROOT / "hubwatch" / "hubsim" / "demo"]
RESULTS = Path(__file__).resolve().parent / "results" / "storage_speed.md"
T0 = datetime(2023, 1, 1, tzinfo=UTC)
TARGETS_MS = {"save_revision": 50, "history": 50, "advisories_affecting": 20, "recent_changes": 50, "claim_due": 200}


def _ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _histories() -> list[Path]:
    return [h for root in FOLDERS for h in sorted(root.iterdir()) if h.is_dir() and "__" in h.name]


def replay(store: Store) -> tuple[list[float], int, list[tuple[RepoId, str]]]:
    """Store every version of every history; return save times, raw bytes saved, (repo, sha) pins."""
    times: list[float] = []
    raw_bytes = 0
    pins: list[tuple[RepoId, str]] = []
    for history in track(_histories(), description="replaying histories"):
        repo = RepoId(*history.name.split("__", 1))
        versions = sorted(
            (p for p in history.iterdir() if p.is_dir() and p.name[1:].isdigit()), key=lambda p: int(p.name[1:])
        )
        parent: str | None = None
        for i, version in enumerate(versions):
            files, contents = [], {}
            for path in sorted(p for p in version.rglob("*") if p.is_file()):
                rel, raw = path.relative_to(version).as_posix(), path.read_bytes()
                files.append(FileRecord(rel, len(raw), hashlib.sha1(raw).hexdigest()))
                contents[rel] = raw
                raw_bytes += len(raw)
            sha = hashlib.sha1(f"{repo}@{version.name}".encode()).hexdigest()
            rev = RevisionRecord(sha, parent, T0 + timedelta(days=i), f"{version.name} of {repo}")
            changes = [
                ChangeRecord(
                    Kind.CONFIG,
                    Severity.LOW,
                    "config.json:x",
                    "x 1 → 2",
                    {"file": "config.json", "key": "x", "old": 1, "new": 2},
                ),
                ChangeRecord(
                    Kind.CHAT_TEMPLATE,
                    Severity.HIGH,
                    "tokenizer_config.json:chat_template",
                    "template",
                    {
                        "file": "tokenizer_config.json",
                        "key": "chat_template",
                        "old": None,
                        "new": "t",
                        "rendered_diff": "-a\n+b\n" * 50,
                    },
                    Direction.UPDATE,
                ),
            ]
            osv = {
                "id": f"x_BENCH-{sha[:12]}",
                "modified": "2024-01-01T00:00:00Z",
                "affected": [
                    {"ranges": [{"type": "GIT", "repo": repo.url(), "events": [{"introduced": "0"}, {"fixed": sha}]}]}
                ],
            }
            adv = AdvisoryRecord(osv["id"], repo, sha, osv, T0)  # type: ignore[arg-type]
            start = time.perf_counter()
            store.save_revision(repo, rev, files, contents, changes, ("bench", {"params": i}), [adv])
            times.append((time.perf_counter() - start) * 1000)
            pins.append((repo, sha))
            parent = sha
    return times, raw_bytes, pins


def run(url: str, label: str) -> list[tuple[str, str, str, str]]:
    rows = []
    with Store.open(url) as store:
        saves, raw_bytes, pins = replay(store)
        repos = sorted({r for r, _ in pins})
        history = [_ms(lambda r=r: store.history(r)) for r in repos]  # type: ignore[misc]
        affecting = [_ms(lambda p=p: store.advisories.affecting(*p)) for p in pins]  # type: ignore[misc]
        recent = [_ms(lambda: store.repos.recent_changes(50)) for _ in range(20)]
        with store.engine.connect() as conn:
            stored = conn.execute(sa.text("SELECT coalesce(sum(length(data)), 0) FROM blobs")).scalar_one()
        whole = _database_bytes(store)
        now = T0
        with store.engine.begin() as conn:  # 10,000 watched repos for the scheduler (bulk insert)
            conn.execute(
                sa.text(
                    "INSERT INTO repos (org, name, key, first_id, watched, state, failures, created_at) "
                    "VALUES (:org, :name, :key, :key, :w, 'new', 0, :t)"
                ),
                [{"org": "bench", "name": f"m{i}", "key": f"bench/m{i}", "w": True, "t": now} for i in range(10_000)],
            )
        claims = [_ms(lambda i=i: store.leases.claim_due(f"w{i}", now, 100, 300)) for i in range(20)]  # type: ignore[misc]
    for name, values in [
        ("save_revision", saves),
        ("history", history),
        ("advisories_affecting", affecting),
        ("recent_changes", recent),
        ("claim_due", claims),
    ]:
        median = statistics.median(values)
        ok = "yes" if median <= TARGETS_MS[name] else "NO"
        rows.append(
            (label, name, f"{median:.1f} ms (n={len(values)}, max {max(values):.1f})", f"≤ {TARGETS_MS[name]} ms: {ok}")
        )
    ratio = stored / raw_bytes
    rows.append(
        (
            label,
            "blob bytes / raw bytes",
            f"{ratio:.1%} ({stored:,} of {raw_bytes:,})",
            f"≤ 50%: {'yes' if ratio <= 0.5 else 'NO'}",
        )
    )
    rows.append(
        (
            label,
            "whole database / raw bytes",
            f"{whole / raw_bytes:.1%} ({whole:,} of {raw_bytes:,})",
            "reported: every table and index (revisions, changes, estimates, advisories…), not only blobs",
        )
    )
    return rows


def _database_bytes(store: Store) -> int:
    """What the store takes on disk: the SQLite file after a checkpoint (pages in use × page size),
    or the PostgreSQL tables with their indexes and TOAST (no catalog)."""
    with store.engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = conn.exec_driver_sql("PRAGMA page_count").scalar_one()
            free = conn.exec_driver_sql("PRAGMA freelist_count").scalar_one()
            size = conn.exec_driver_sql("PRAGMA page_size").scalar_one()
            return int((pages - free) * size)
        total = conn.execute(
            sa.text(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'"
            )
        ).scalar_one()
        return int(total)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--postgres", help="server URL; a scratch database is created there and dropped")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rows += run(f"sqlite:///{Path(tmp) / 'bench.db'}", "sqlite")
    if args.postgres:
        import psycopg
        from psycopg import sql

        name = f"hubwatch_bench_{uuid.uuid4().hex[:12]}"
        base = sa.make_url(args.postgres)
        admin_url = base.set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            rows += run(base.set(database=name).render_as_string(hide_password=False), "postgresql")
        finally:
            with psycopg.connect(admin_url, autocommit=True) as admin:
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    table = Table("backend", "measure", "result", "target")
    for row in rows:
        table.add_row(*row)
    Console().print(table)
    lines = [
        "# storage_speed",
        "",
        f"Run: `python -m benchmarks.storage_speed` on {datetime.now(UTC):%Y-%m-%d}.",
        "",
        "| backend | measure | result | target |",
        "|---|---|---|---|",
    ]
    lines += [f"| {' | '.join(r)} |" for r in rows]
    lines += ["", "The blob row counts only the blobs table; the whole-database row counts every table and index. "
              "Each revision here stores a stand-in estimate (`{\"params\": i}`): a tracker's full estimates "
              "take more (see benchmarks/results/backfill_floor.md)."]
    RESULTS.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
