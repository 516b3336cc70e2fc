"""Notifications out: `notify_subscriptions` and the transactional outbox `notify_outbox`.

- `notify_subscriptions`: an Apprise URL (an `https://` one is a signed webhook with its own
  `whsec_…` secret), the filters (repos, orgs, kinds, minimum severity, a code base's pins) and
  an optional digest period.
- `notify_outbox`: one row per message, written in the transaction that stores the revision causing
  it; `key` (unique) is the idempotency key, so a replay never enqueues twice; the delivery state
  (attempts, next attempt, lease, last error) lives here, so a crashed sender resumes.

Revision ID: 0007_notifications
Revises: 0006_repo_aliases
Create Date: 2026-12-10
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0007_notifications"
down_revision: str | None = "0006_repo_aliases"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _ts(name: str, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "notify_subscriptions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("secret", sa.String(100), nullable=True),
        sa.Column("repos", sa.JSON(), nullable=False),
        sa.Column("orgs", sa.JSON(), nullable=False),
        sa.Column("kinds", sa.JSON(), nullable=False),
        sa.Column("min_severity", sa.String(16), nullable=True),
        sa.Column("pins_path", sa.Text(), nullable=True),
        sa.Column("pin_repos", sa.JSON(), nullable=False),
        sa.Column("digest", sa.String(8), nullable=True),
        _ts("created_at", nullable=False),
        sa.CheckConstraint("digest IN ('daily', 'weekly')", name="ck_notify_subscriptions_digest"),
    )
    op.create_table(
        "notify_outbox",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "subscription_id",
            sa.Integer(),
            sa.ForeignKey("notify_subscriptions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("key", sa.String(300), nullable=False),
        sa.Column("repo", sa.String(193), nullable=False),
        sa.Column("sha", sa.String(40), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        _ts("due_at", nullable=False),
        sa.Column("lease_owner", sa.String(200), nullable=True),
        _ts("lease_expires_at"),
        sa.Column("last_error", sa.Text(), nullable=True),
        _ts("created_at", nullable=False),
        _ts("sent_at"),
        sa.UniqueConstraint("key", name="uq_notify_outbox_key"),
        sa.CheckConstraint("state IN ('pending', 'sent', 'dead', 'skipped')", name="ck_notify_outbox_state"),
    )
    op.create_index("ix_notify_outbox_due", "notify_outbox", ["state", "due_at"])
    op.create_index("ix_notify_outbox_subscription_sent", "notify_outbox", ["subscription_id", "sent_at"])


def downgrade() -> None:
    op.drop_index("ix_notify_outbox_subscription_sent", table_name="notify_outbox")
    op.drop_index("ix_notify_outbox_due", table_name="notify_outbox")
    op.drop_table("notify_outbox")
    op.drop_table("notify_subscriptions")
