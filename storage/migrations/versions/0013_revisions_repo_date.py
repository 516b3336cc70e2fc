"""`ix_revisions_repo_date`: a repo's revisions by commit date, then arrival, read newest first without a sort.

The feeds of one repo, its badge and the index page's newest change per repo ask for a repo's
newest revisions by (date, id): with this index the database walks them from the newest and stops
at the page's end, instead of sorting every stored revision of the repo.

Revision ID: 0013_revisions_repo_date
Revises: 0012_estimate_bodies
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0013_revisions_repo_date"
down_revision: str | None = "0012_estimate_bodies"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_revisions_repo_date", "revisions", ["repo_id", "date", "id"])


def downgrade() -> None:
    op.drop_index("ix_revisions_repo_date", table_name="revisions")
