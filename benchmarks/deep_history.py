"""Deep synthetic histories for the depth benchmarks (`poll_depth`, `check_depth`, `web_depth`): shas,
advisory records shaped as hubwatch stores them, and a line of revisions filled into a store."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import track
from rich.table import Table

from hubwatch.domain.records import AdvisoryRecord, FileRecord, RepoId, RevisionRecord
from hubwatch.storage import Store

__all__ = ["START", "advisory", "fill_line", "publish", "sha_at"]

START = datetime(2024, 1, 1, tzinfo=UTC)  # revision i is committed i hours after this


def sha_at(repo: RepoId, i: int) -> str:
    """The sha of the repo's revision `i`."""
    return hashlib.sha1(f"{repo}/{i}".encode()).hexdigest()


def advisory(repo: RepoId, sha: str, when: datetime, events: list[dict[str, str]], summary: str, *,
             direction: str | None = None, changes: list[dict[str, Any]] | None = None,
             prose: bool = True) -> AdvisoryRecord:
    """A record raised at `sha` with one GIT range of `events`; `prose`: a rendered record's details,
    as stored (600 characters); `direction` and `changes` go into `database_specific` when given."""
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    adv_id = f"x_HUBWATCH-{when.year}-{hashlib.sha256(f'{repo}@{sha}'.encode()).hexdigest()[:12]}"
    specific: dict[str, Any] = {"max_severity": "high"}
    if direction is not None:
        specific["direction"] = direction
    if changes is not None:
        specific["changes"] = changes
    osv: dict[str, Any] = {"schema_version": "1.7.5", "id": adv_id, "modified": stamp, "published": stamp,
                           "summary": summary}
    if prose:
        osv["details"] = "x" * 600
    osv["affected"] = [{"package": {"ecosystem": "GIT", "name": repo.url()},
                        "ranges": [{"type": "GIT", "repo": repo.url(), "events": events}]}]
    osv["database_specific"] = specific
    return AdvisoryRecord(adv_id, repo, sha, osv, when)


def fill_line(store: Store, repo: RepoId, depth: int, records_at: Callable[[int, str, datetime], list[AdvisoryRecord]],
              parent_of: Callable[[int, str | None], str | None] = lambda i, previous: previous) -> None:
    """Watch `repo` and store `depth` revisions (a config.json each, no changes, no estimate), revision
    i with the records `records_at(i, sha, when)` and the parent `parent_of(i, previous sha)`."""
    store.watch(repo)
    previous: str | None = None
    for i in track(range(depth), description=f"filling {repo} ({depth} revisions)"):
        sha, when = sha_at(repo, i), START + timedelta(hours=i)
        body = f'{{"model_type": "llama", "rev": {i}}}'.encode()
        store.save_revision(repo, RevisionRecord(sha, parent_of(i, previous), when, f"update {i}"),
                            [FileRecord("config.json", len(body))], {"config.json": body}, [], None,
                            records_at(i, sha, when))
        previous = sha


def publish(console: Console, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], results: Path,
            heading: str, verdict: str) -> None:
    """Print `rows` under `columns` as a table with the `verdict`, and write them to `results` as
    markdown after `heading` (the first column left-aligned, the figures right-aligned)."""
    table = Table(title=title)
    for i, col in enumerate(columns):
        table.add_column(col, justify="left" if i == 0 else "right")
    for cells in rows:
        table.add_row(*cells)
    console.print(table)
    console.print(verdict)
    md = ["| " + " | ".join(columns) + " |", "|---|" + "---:|" * (len(columns) - 1)]
    md += ["| " + " | ".join(cells) + " |" for cells in rows]
    results.write_text(heading + "\n\n" + "\n".join(md) + f"\n\n{verdict}.\n")
