"""Builders of records for the storage tests (deterministic shas, tz-aware dates)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, Kind, RepoId, RevisionRecord, Severity

T0 = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)


def sha(label: str) -> str:
    return hashlib.sha1(label.encode()).hexdigest()


def rev(label: str, parent: str | None = None, day: int = 0, title: str | None = None) -> RevisionRecord:
    return RevisionRecord(
        sha=sha(label),
        parent=sha(parent) if parent else None,
        date=T0 + timedelta(days=day),
        title=title or f"commit {label}",
        message=f"message of {label}",
        authors=("alice", "bob"),
    )


def change(
    kind: Kind = Kind.CONTEXT,
    severity: Severity = Severity.MEDIUM,
    path: str = "config.json:max_position_embeddings",
    direction: str = "hazard",
    **detail: Any,
) -> ChangeRecord:
    body = {"file": path.split(":")[0], "key": path.partition(":")[2] or None, "old": 2048, "new": 4096}
    body.update(detail)
    return ChangeRecord(kind, severity, path, f"{path} changed", body, direction)


def git_osv(repo: RepoId, adv_id: str, events: list[dict[str, str]], modified: datetime = T0) -> dict[str, Any]:
    return {
        "schema_version": "1.7.5",
        "id": adv_id,
        "modified": modified.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "published": T0.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "summary": f"advisory {adv_id}",
        "affected": [
            {
                "package": {"ecosystem": "GIT", "name": repo.url()},
                "ranges": [{"type": "GIT", "repo": repo.url(), "events": events}],
            }
        ],
    }


def advisory(
    repo: RepoId,
    adv_id: str,
    raised_at: str,
    events: list[dict[str, str]],
    modified: datetime = T0,
    withdrawn: datetime | None = None,
) -> AdvisoryRecord:
    osv = git_osv(repo, adv_id, events, modified)
    if withdrawn is not None:
        osv["withdrawn"] = withdrawn.strftime("%Y-%m-%dT%H:%M:%SZ")
    return AdvisoryRecord(adv_id, repo, sha(raised_at), osv, modified, withdrawn)



def _alembic(engine: Any, step: str, target: str) -> None:
    from alembic import command
    from hubwatch.storage.migrate import alembic_config, migration_transaction

    cfg = alembic_config()
    with migration_transaction(engine) as conn:
        cfg.attributes["connection"] = conn
        getattr(command, step)(cfg, target)


def downgrade_to(engine: Any, revision: str) -> None:
    """Take the store on `engine` back to migration `revision` (one transaction)."""
    _alembic(engine, "downgrade", revision)


def upgrade_to_head(engine: Any) -> None:
    """Run the store's migrations on `engine` up to the newest (one transaction)."""
    _alembic(engine, "upgrade", "head")
