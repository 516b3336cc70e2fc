"""What a backfill stores, as a dump to compare across two trees (a change that must keep the rows).

`dump OUT [POSTGRES_URL]` backfills every bundled history (the backfill_floor benchmark's repos and
emulator) into a fresh store with a fixed clock and two notification subscriptions (so the outbox
is written too), then writes every table's rows to OUT as JSON: row ids replaced by natural keys
(a repo by its key, a revision by repo and sha), rows sorted, so ids that depend on which poll
thread stored first do not count; everything else does (JSON text as stored, timestamps, blobs).
`compare A B` says, per table, whether the two dumps hold the same rows (exit 1 when not).
Run one tree's dump with `PYTHONPATH=/that/tree`, as the emulator and the store then come from it.
"""

from __future__ import annotations

import json
import sys
import tempfile
from contextlib import nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlmodel import SQLModel

from benchmarks.backfill_floor import bench_root, emulator, postgres_database
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.notify.policy import NotifyPolicy
from hubwatch.storage.notify.notify import NotifyStore, SubscriptionSpec
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.scheduler import PollCycle

__all__ = ["compare", "dump", "main"]

FIXED = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def _plain(value: Any) -> Any:
    if isinstance(value, (bytes, memoryview)):
        return bytes(value).hex()
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def _rows(store: Store) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    with store.engine.connect() as conn:
        repo_key: dict[Any, Any] = dict(conn.execute(sa.text("SELECT id, key FROM repos")).tuples().all())
        revision_key = {
            i: [repo_key[r], s] for i, r, s in conn.execute(sa.text("SELECT id, repo_id, sha FROM revisions")).tuples()
        }
        for table in SQLModel.metadata.sorted_tables:
            refers = {c.name: fk.column.table.name for c in table.columns for fk in c.foreign_keys}
            rows = []
            for row in conn.execute(sa.text(f'SELECT * FROM "{table.name}"')).mappings():  # raw: no type processing
                plain: dict[str, Any] = {}
                for name, value in row.items():
                    if name == "id" and isinstance(value, int):
                        continue  # a serial id: which thread stored first
                    if refers.get(name) == "repos":
                        value = repo_key.get(value, value)
                    elif refers.get(name) == "revisions":
                        value = revision_key.get(value, value)
                    plain[name] = _plain(value)
                rows.append(json.dumps(plain, sort_keys=True))
            out[table.name] = sorted(rows)
    return out


def dump(out: Path, postgres: str | None = None) -> dict[str, int]:
    """Backfill into a fresh store (SQLite, or a new database on `postgres`) and write its rows to `out`."""
    with tempfile.TemporaryDirectory() as tmp:
        root, repos = bench_root(Path(tmp))
        with emulator(root) as hub_url:
            database = postgres_database(postgres) if postgres else nullcontext(f"sqlite:///{Path(tmp) / 'identity.db'}")
            with database as url:
                store = Store.open(url, clock=lambda: FIXED, notify=NotifyPolicy())
                try:
                    for repo in repos:
                        store.watch(repo)
                    notify = NotifyStore(store.engine, lambda: FIXED)
                    notify.add(SubscriptionSpec(url="https://example.invalid/all"))
                    notify.add(SubscriptionSpec(url="https://example.invalid/daily", digest="daily"))
                    settings = Settings(database_url="sqlite://", hub_endpoint=hub_url, poll_interval_s=60)
                    PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings,
                              worker_id="bench", clock=lambda: FIXED)()
                    rows = _rows(store)
                finally:
                    store.close()
    out.write_text(json.dumps(rows, indent=0))
    return {name: len(r) for name, r in rows.items()}


def compare(a: Path, b: Path) -> bool:
    """Print, per table, whether dumps `a` and `b` hold the same rows; True when all do."""
    left, right = json.loads(a.read_text()), json.loads(b.read_text())
    same = True
    for name in sorted(set(left) | set(right)):
        ra, rb = left.get(name, []), right.get(name, [])
        if ra == rb:
            print(f"{name}: {len(ra)} rows identical")
            continue
        same = False
        only_a, only_b = set(ra) - set(rb), set(rb) - set(ra)
        print(f"{name}: {len(ra)} vs {len(rb)} rows; {len(only_a)} only in A, {len(only_b)} only in B")
        for row in sorted(only_a)[:2]:
            print("  A:", row[:400])
        for row in sorted(only_b)[:2]:
            print("  B:", row[:400])
    print("IDENTICAL" if same else "DIFFERENT")
    return same


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) in (2, 3) and args[0] == "dump":
        print(dump(Path(args[1]), args[2] if len(args) == 3 else None))
        return 0
    if len(args) == 3 and args[0] == "compare":
        return 0 if compare(Path(args[1]), Path(args[2])) else 1
    print("usage: python -m benchmarks.backfill_identity dump OUT [POSTGRES_URL] | compare A B", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
