"""Model families: `family_roots` (bases watched with their derivatives) and `family_members`
(each derivative's base, the relation the hub tags it with, and the inheritance notes).

Revision ID: 0010_families
Revises: 0009_notify_message_ids
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0010_families"
down_revision: str | None = "0009_notify_message_ids"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _ts(name: str, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "family_roots",
        sa.Column("repo_id", sa.Integer(), sa.ForeignKey("repos.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("relations", sa.JSON(), nullable=False),
        sa.Column("max_derivatives", sa.Integer(), nullable=True),
        _ts("refreshed_at"),
        _ts("created_at", nullable=False),
    )
    op.create_table(
        "family_members",
        sa.Column("repo_id", sa.Integer(), sa.ForeignKey("repos.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("base_id", sa.Integer(), sa.ForeignKey("repos.id", ondelete="CASCADE"), nullable=False),
        sa.Column("relation", sa.String(16), nullable=False),
        _ts("found_at", nullable=False),
        sa.Column("notes", sa.JSON(), nullable=False),
    )
    op.create_index("ix_family_members_base", "family_members", ["base_id"])


def downgrade() -> None:
    op.drop_index("ix_family_members_base", table_name="family_members")
    op.drop_table("family_members")
    op.drop_table("family_roots")
