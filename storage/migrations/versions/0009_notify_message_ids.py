"""`notify_outbox.message_id`: the delivered message each sent row went in.

A single message and a grouped one (a digest, or the rest past the rate limit) each get their own id
(the `webhook-id` a receiver sees); the rows delivered together share it. The per-subscription rate
limit counts distinct message ids sent in the window. Rows sent before this migration get an id of
their own (`legacy:ROW_ID`): each counts as one message, which only errs on the strict side for the
hour after the upgrade.

Revision ID: 0009_notify_message_ids
Revises: 0008_repo_summaries
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_notify_message_ids"
down_revision: str | None = "0008_repo_summaries"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("notify_outbox") as batch:
        batch.add_column(sa.Column("message_id", sa.String(64), nullable=True))
    outbox = sa.table("notify_outbox", sa.column("id", sa.Integer()), sa.column("state", sa.String()),
                      sa.column("message_id", sa.String()))  # fmt: skip
    op.execute(
        outbox.update()
        .where(outbox.c.state == "sent")
        .values(message_id=sa.literal("legacy:") + sa.cast(outbox.c.id, sa.String()))
    )


def downgrade() -> None:
    with op.batch_alter_table("notify_outbox") as batch:
        batch.drop_column("message_id")
