"""History restores: commits a force-push dropped that upstream pushed back (the head moved onto them
again with nothing new), recorded when seen, for the feeds and the model page.

Revision ID: 0015_history_restores
Revises: 0014_advisory_keys
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_history_restores"
down_revision: str | None = "0014_advisory_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "history_restores",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("repo_id", sa.Integer(), sa.ForeignKey("repos.id", ondelete="CASCADE"), nullable=False),
        sa.Column("detected_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("old_head", sa.String(40), nullable=False),
        sa.Column("new_head", sa.String(40), nullable=False),
        sa.Column("restored", sa.JSON(), nullable=False),
        sa.UniqueConstraint("repo_id", "old_head", "new_head", name="uq_history_restores_repo_heads"),
    )
    op.create_index("ix_history_restores_repo", "history_restores", ["repo_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_history_restores_repo", table_name="history_restores")
    op.drop_table("history_restores")
