"""The recently-modified listing per repo type: `poll_cycles.datasets_listing` and an index that
tells cheaply whether any dataset (or model) is watched.

- `poll_cycles.datasets_listing`: how the cycle's datasets listing went, in the words `listing`
  uses for the models' (ok, busy, failed, none: not read, e.g. no dataset watched). Rows before
  this migration read none: no cycle read a datasets listing then.
- `ix_repos_type_watched` on `repos (repo_type, watched)`: `store.repos.watched_types()` asks one
  EXISTS per type each cycle, a seek in this index however long the watch list.

Revision ID: 0017_listing_per_type
Revises: 0016_repo_types
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_listing_per_type"
down_revision: str | None = "0016_repo_types"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("poll_cycles") as batch:
        batch.add_column(sa.Column("datasets_listing", sa.String(16), nullable=False, server_default="none"))
    with op.batch_alter_table("poll_cycles") as batch:  # the model has no server default
        batch.alter_column("datasets_listing", server_default=None)
    op.create_index("ix_repos_type_watched", "repos", ["repo_type", "watched"])


def downgrade() -> None:
    op.drop_index("ix_repos_type_watched", table_name="repos")
    with op.batch_alter_table("poll_cycles") as batch:
        batch.drop_column("datasets_listing")
