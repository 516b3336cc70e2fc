"""Named values about the store: `advisory_model`, the advisory model its records were derived with.

A store without the value (every store made before issue 9's model) holds records of model 1; the
tracker re-derives them on the next poll or run (hubwatch.tracker.rederive) and records the model.

Revision ID: 0004_store_meta
Revises: 0003_direction_names
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_store_meta"
down_revision: str | None = "0003_direction_names"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "store_meta",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("store_meta")
