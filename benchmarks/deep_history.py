"""Deep synthetic histories for the depth benchmarks (`poll_depth`, `check_depth`, `web_depth`): shas,
advisory records shaped as hubwatch stores them, and a line of revisions filled into a store."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from rich.progress import track

from hubwatch.domain.records import AdvisoryRecord, FileRecord, RepoId, RevisionRecord
from hubwatch.storage import Store

__all__ = ["START", "advisory", "fill_line", "sha_at"]

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
