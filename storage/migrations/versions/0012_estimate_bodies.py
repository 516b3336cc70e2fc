"""Estimates stored compactly: `estimate_bodies` holds each distinct estimate JSON once.

An estimate names its revision (`"revision": sha`) and is otherwise equal to its parent's whenever
the commit changed no config, so the JSON was stored again for nearly every commit. Now
`estimates.body_sha256` points at the body (the estimate with null in its `revision` key, keyed by
the sha256 of its canonical JSON) and `estimates.revision_json` keeps the JSON of the revision it
named (NULL when it had no such key). Reading joins them back into the dict that was written.

Existing estimates are split the same way, a batch at a time; `estimates.data` is then dropped.
The downgrade writes each estimate's JSON back into `estimates.data`.

Revision ID: 0012_estimate_bodies
Revises: 0011_poll_cycle_requests
Create Date: 2026-12-02
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0012_estimate_bodies"
down_revision: str | None = "0011_poll_cycle_requests"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 500
_FK = "fk_estimates_body_sha256"
_INDEX = "ix_estimates_body_sha256"


def _split(data: dict[str, Any]) -> tuple[str, dict[str, Any], str | None]:
    # The same split as hubwatch.storage.revisions.estimates.body_of, kept here as it was when written.
    if "revision" in data:
        body, named = {**data, "revision": None}, json.dumps(data["revision"])
    else:
        body, named = data, None
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest(), body, named


def upgrade() -> None:
    op.create_table(
        "estimate_bodies",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("stored_at", sa.DateTime(timezone=True), nullable=False),
    )
    # Plain ADD COLUMN first (no table copy while the rows are rewritten).
    op.add_column("estimates", sa.Column("body_sha256", sa.String(64), nullable=True))
    op.add_column("estimates", sa.Column("revision_json", sa.Text(), nullable=True))
    conn = op.get_bind()
    estimates = sa.table("estimates", sa.column("id", sa.Integer), sa.column("data", sa.JSON),
                         sa.column("body_sha256", sa.String), sa.column("revision_json", sa.Text))
    bodies = sa.table("estimate_bodies", sa.column("sha256", sa.String), sa.column("data", sa.JSON),
                      sa.column("stored_at", sa.DateTime(timezone=True)))
    now = datetime.now(UTC)
    last = 0
    while True:
        rows = conn.execute(
            sa.select(estimates.c.id, estimates.c.data).where(estimates.c.id > last).order_by(estimates.c.id).limit(_BATCH)
        ).all()
        if not rows:
            break
        last = int(rows[-1].id)
        split = {int(r.id): _split(r.data if isinstance(r.data, dict) else {}) for r in rows}
        wanted = sorted({digest for digest, _, _ in split.values()})
        have = set(conn.execute(sa.select(bodies.c.sha256).where(bodies.c.sha256.in_(wanted))).scalars())
        new: dict[str, dict[str, Any]] = {}
        for digest, body, _ in split.values():
            if digest not in have:
                new.setdefault(digest, body)
        if new:
            conn.execute(bodies.insert(), [{"sha256": d, "data": b, "stored_at": now} for d, b in new.items()])
        for row_id, (digest, _, named) in split.items():
            conn.execute(
                estimates.update().where(estimates.c.id == row_id).values(body_sha256=digest, revision_json=named)
            )
    # `estimates` is a child table (nothing refers to it), so SQLite's batch copy of it is safe.
    with op.batch_alter_table("estimates") as batch:
        batch.alter_column("body_sha256", existing_type=sa.String(64), nullable=False)
        batch.create_foreign_key(_FK, "estimate_bodies", ["body_sha256"], ["sha256"])
        batch.create_index(_INDEX, ["body_sha256"])
        batch.drop_column("data")


def downgrade() -> None:
    op.add_column("estimates", sa.Column("data", sa.JSON(), nullable=True))
    conn = op.get_bind()
    estimates = sa.table("estimates", sa.column("id", sa.Integer), sa.column("data", sa.JSON),
                         sa.column("body_sha256", sa.String), sa.column("revision_json", sa.Text))
    bodies = sa.table("estimate_bodies", sa.column("sha256", sa.String), sa.column("data", sa.JSON))
    rows = conn.execute(
        sa.select(estimates.c.id, bodies.c.data, estimates.c.revision_json).select_from(
            estimates.join(bodies, bodies.c.sha256 == estimates.c.body_sha256)
        )
    ).all()
    for r in rows:
        data = dict(r.data) if r.revision_json is None else {**r.data, "revision": json.loads(r.revision_json)}
        conn.execute(estimates.update().where(estimates.c.id == r.id).values(data=data))
    with op.batch_alter_table("estimates") as batch:
        batch.alter_column("data", existing_type=sa.JSON(), nullable=False)
        batch.drop_index(_INDEX)
        batch.drop_constraint(_FK, type_="foreignkey")
        batch.drop_column("revision_json")
        batch.drop_column("body_sha256")
    op.drop_table("estimate_bodies")
