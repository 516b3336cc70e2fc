"""Per-repo summaries kept at write time: `repos.revision_count` and `repos.history_version`.

- `revision_count`: how many revisions of the repo are stored (one more with every saved revision),
  so that pages show the count without counting the history.
- `history_version`: a counter raised by every write that can change what is derived from the
  repo's history and advisories (a saved revision or estimate, an upserted or withdrawn advisory, a force-push
  or head move, a rename or merge); readers key what they derive from the whole history (the
  standing at the head) by it and recompute only when it moved.

Existing rows get the count of their stored revisions and version 0.

Revision ID: 0008_repo_summaries
Revises: 0007_notifications
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_repo_summaries"
down_revision: str | None = "0007_notifications"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMN, never batch mode: on SQLite batch mode copies `repos` and drops the original,
    # and dropping a parent table with foreign keys on deletes its history through ON DELETE CASCADE.
    op.add_column("repos", sa.Column("revision_count", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("repos", sa.Column("history_version", sa.Integer(), nullable=False, server_default="0"))
    op.execute(
        sa.text(
            "UPDATE repos SET revision_count = (SELECT count(*) FROM revisions WHERE revisions.repo_id = repos.id)"
        )
    )


def downgrade() -> None:
    op.drop_column("repos", "history_version")  # SQLite ≥ 3.35 drops a column in place (no table copy)
    op.drop_column("repos", "revision_count")
