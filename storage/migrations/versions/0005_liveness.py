"""Liveness: rows that must exist once are constraints, and per-cycle poll telemetry.

- `history_rewrites`: one row per (repo, old head, new head) — concurrent polls of a force-push
  recorded it twice (check-then-insert); duplicates are deleted (the oldest row kept).
- `advisory_events`: one event per (advisory, range, position).
- `poll_cycles`: one row per poll cycle of a worker (start, end, requests by status, new
  revisions, failures, rate-limit waits, lag from upstream commit to stored revision).

Revision ID: 0005_liveness
Revises: 0004_store_meta
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_liveness"
down_revision: str | None = "0004_store_meta"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UNIQUE = (
    ("history_rewrites", "uq_history_rewrites_repo_heads", ["repo_id", "old_head", "new_head"]),
    ("advisory_events", "uq_advisory_events_position", ["advisory_id", "range_index", "ordinal"]),
)


def _dedupe(table: str, columns: list[str]) -> None:
    keys = ", ".join(columns)
    op.execute(
        sa.text(f"DELETE FROM {table} WHERE id NOT IN (SELECT min(id) FROM {table} GROUP BY {keys})")
    )


def upgrade() -> None:
    for table, name, columns in _UNIQUE:
        _dedupe(table, columns)
        with op.batch_alter_table(table) as batch:
            batch.create_unique_constraint(name, columns)
    op.create_table(
        "poll_cycles",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("worker", sa.String(200), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("listing", sa.String(16), nullable=False),
        sa.Column("repos", sa.Integer(), nullable=False),
        sa.Column("new_revisions", sa.Integer(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("rate_limited", sa.Integer(), nullable=False),
        sa.Column("requests_ok", sa.Integer(), nullable=False),
        sa.Column("requests_4xx", sa.Integer(), nullable=False),
        sa.Column("requests_429", sa.Integer(), nullable=False),
        sa.Column("requests_5xx", sa.Integer(), nullable=False),
        sa.Column("lag_max_s", sa.Float(), nullable=True),
        sa.Column("lag_mean_s", sa.Float(), nullable=True),
    )
    op.create_index("ix_poll_cycles_started", "poll_cycles", ["started_at"])


def downgrade() -> None:
    op.drop_index("ix_poll_cycles_started", table_name="poll_cycles")
    op.drop_table("poll_cycles")
    for table, name, _ in reversed(_UNIQUE):
        with op.batch_alter_table(table) as batch:
            batch.drop_constraint(name, type_="unique")
