"""Test helper: replay a history folder through diff, estimate and advise (pure, no store, no hub).

Each version is diffed against the one before, the estimate moves are added as the tracker adds
them, and `plan_advisories` gets the records so far (upserted by id, as the store does). The
result answers "which records affect version vN" with OSV's GIT-range rules over the linear history.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "diff"))

from diff_histories import load_version, versions  # noqa: E402

from hubwatch.advisories.advise import plan_advisories  # noqa: E402
from osv_schema_check import assert_schema_valid  # noqa: E402
from hubwatch.diff import diff_snapshots  # noqa: E402
from hubwatch.domain.records import AdvisoryRecord, RepoId, RevisionRecord  # noqa: E402
from hubwatch.domain.snapshot import Snapshot  # noqa: E402
from hubwatch.settings import Settings  # noqa: E402
from hubwatch.domain.gitrange import Lineage, git_events, range_affects  # noqa: E402
from hubwatch.tracker.estimating import estimate_change, estimate_snapshot  # noqa: E402

__all__ = ["Replayed", "affecting", "replay_advice", "repo_of"]


@dataclass(frozen=True)
class Replayed:
    repo: RepoId
    versions: tuple[str, ...]  # v1, v2, … in order
    shas: tuple[str, ...]  # the commit of each version (the snapshot's sha)
    records: dict[str, AdvisoryRecord]  # by id, the latest of each


def repo_of(history: Path) -> RepoId:
    org, _, name = history.name.partition("__")
    return RepoId(org, name)


def _date(text: str, index: int) -> datetime:
    try:
        day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc)
    except ValueError:
        day = datetime(2024, 1, 1, tzinfo=timezone.utc)
    return day.replace(hour=index % 24, minute=index // 24 % 60)


def replay_advice(history: Path, settings: Settings | None = None) -> Replayed:
    settings = settings or Settings()
    repo = repo_of(history)
    records: dict[str, AdvisoryRecord] = {}
    previous: Snapshot | None = None
    previous_estimate = None
    names: list[str] = []
    shas: list[str] = []
    for index, row in enumerate(versions(history)):
        snapshot = load_version(history / row["version"])
        changes = diff_snapshots(previous, snapshot)
        estimate = estimate_snapshot(snapshot)
        moved = estimate_change(previous_estimate, estimate) if previous is not None else None
        if moved is not None:
            changes.append(moved)
        revision = RevisionRecord(
            snapshot.sha, shas[-1] if shas else None, _date(row.get("date") or "", index), row.get("message") or row["version"]
        )
        for record in plan_advisories(repo, revision, changes, list(records.values()), settings):
            assert_schema_valid(record.osv)
            records[record.id] = record
        names.append(row["version"])
        shas.append(snapshot.sha)
        previous, previous_estimate = snapshot, estimate
    return Replayed(repo, tuple(names), tuple(shas), records)


def affecting(replayed: Replayed, version: str) -> list[AdvisoryRecord]:
    """The live records whose GIT range covers `version` (withdrawn ones skipped)."""
    at = replayed.versions.index(version)
    line = Lineage(replayed.shas[: at + 1])
    out = []
    for record in sorted(replayed.records.values(), key=lambda r: r.id):
        if record.withdrawn is not None:
            continue
        events = git_events(record.osv)
        by_range: dict[int, list[object]] = {}
        for event in events:
            by_range.setdefault(event.range_index, []).append(event)
        if any(range_affects([e for e in events if e.range_index == i], line) for i in by_range):
            out.append(record)
    return out
