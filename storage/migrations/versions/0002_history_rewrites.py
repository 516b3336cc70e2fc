"""History rewrites: force-pushes seen upstream (also those that only removed commits).

Revision ID: 0002_history_rewrites
Revises: 0001_initial
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_history_rewrites"
down_revision: str | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "history_rewrites",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("repo_id", sa.Integer(), sa.ForeignKey("repos.id", ondelete="CASCADE"), nullable=False),
        sa.Column("detected_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("old_head", sa.String(40), nullable=False),
        sa.Column("new_head", sa.String(40), nullable=False),
        sa.Column("dropped", sa.JSON(), nullable=False),
    )
    op.create_index("ix_history_rewrites_repo", "history_rewrites", ["repo_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_history_rewrites_repo", table_name="history_rewrites")
    op.drop_table("history_rewrites")
