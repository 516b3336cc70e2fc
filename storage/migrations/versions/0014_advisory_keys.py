"""`advisory_keys`: the (file, key) pairs each advisory's changes name, indexed by digest.

Planning a new revision's advisories needs the repo's records that the revision may close or undo:
the open ones (no `fixed` event: each holds one row more, the `_OPEN` digest) and those sharing a
(file, key) pair with the revision's changes; both are found per repo through one index.
Before this table the tracker read and decoded every record of the repo for that, once a poll, a
cost that grew with the repo's history; now it asks the index for the pairs at hand.

Existing advisories are indexed here, a batch at a time, from their stored OSV JSON.

Revision ID: 0014_advisory_keys
Revises: 0013_revisions_repo_date
Create Date: 2026-12-03
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0014_advisory_keys"
down_revision: str | None = "0013_revisions_repo_date"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 500


# The pairs and digest of hubwatch.advisories.advise_match.record_keys and
# hubwatch.storage.advisories.advisories.match_digest, kept here as they were when written.
def _files(detail: dict[str, Any]) -> set[str]:
    files = detail.get("files")
    if isinstance(files, list) and files and all(isinstance(f, str) for f in files):
        return set(files)
    file = detail.get("file")
    return {file} if isinstance(file, str) and file else set()


def _record_keys(osv: Any) -> set[tuple[str, str | None]]:
    ds = osv.get("database_specific") if isinstance(osv, dict) else None
    changes = ds.get("changes") if isinstance(ds, dict) else None
    out: set[tuple[str, str | None]] = set()
    for entry in changes if isinstance(changes, list) else ():
        detail = entry.get("detail") if isinstance(entry, dict) else None
        if not isinstance(detail, dict):
            continue
        key, file = detail.get("key"), detail.get("file")
        if key is None:
            out.update((f, None) for f in _files(detail))
        elif isinstance(file, str):
            out.add((file, key if isinstance(key, str) else None))
    return out


def _digest(file: str, key: str | None) -> str:
    return hashlib.sha256(json.dumps([file, key]).encode()).hexdigest()


# hubwatch.storage.advisories.advisories.OPEN_MATCH: the row of a record without a `fixed` event in a GIT range.
_OPEN = hashlib.sha256(b"open: no fixed event").hexdigest()


def _open(osv: Any) -> set[str]:
    for affected in osv.get("affected") or [] if isinstance(osv, dict) else []:
        for rng in affected.get("ranges") or [] if isinstance(affected, dict) else []:
            if not isinstance(rng, dict) or rng.get("type") != "GIT":
                continue
            for event in rng.get("events") or []:
                if isinstance(event, dict) and isinstance(event.get("fixed"), str) and event["fixed"]:
                    return set()
    return {_OPEN}


def upgrade() -> None:
    op.create_table(
        "advisory_keys",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("advisory_id", sa.String(200), sa.ForeignKey("advisories.id", ondelete="CASCADE"), nullable=False),
        sa.Column("repo_id", sa.Integer(), nullable=False),
        sa.Column("match", sa.String(64), nullable=False),
    )
    op.create_index("ix_advisory_keys_advisory", "advisory_keys", ["advisory_id"])
    op.create_index("ix_advisory_keys_match", "advisory_keys", ["repo_id", "match", "advisory_id"])
    conn = op.get_bind()
    advisories = sa.table("advisories", sa.column("id", sa.String), sa.column("repo_id", sa.Integer),
                          sa.column("osv", sa.JSON))
    keys = sa.table("advisory_keys", sa.column("advisory_id", sa.String), sa.column("repo_id", sa.Integer),
                    sa.column("match", sa.String))
    last = ""
    while True:
        rows = conn.execute(
            sa.select(advisories.c.id, advisories.c.repo_id, advisories.c.osv).where(advisories.c.id > last).order_by(advisories.c.id)
            .limit(_BATCH)
        ).all()
        if not rows:
            break
        last = str(rows[-1].id)
        values = [{"advisory_id": r.id, "repo_id": r.repo_id, "match": m} for r in rows
                  for m in sorted({_digest(f, k) for f, k in _record_keys(r.osv)} | _open(r.osv))]
        if values:
            conn.execute(keys.insert(), values)


def downgrade() -> None:
    op.drop_table("advisory_keys")
