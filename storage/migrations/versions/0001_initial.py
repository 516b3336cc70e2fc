"""Initial schema: repos, revisions, blobs, file versions, changes, estimates, advisories, poll runs.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001_initial"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "repos",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("org", sa.String(96), nullable=False),
        sa.Column("name", sa.String(96), nullable=False),
        sa.Column("watched", sa.Boolean(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("head_sha", sa.String(40), nullable=True),
        sa.Column("last_polled_at", TS, nullable=True),
        sa.Column("next_poll_at", TS, nullable=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("lease_owner", sa.String(200), nullable=True),
        sa.Column("lease_expires_at", TS, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("org", "name", name="uq_repos_org_name"),
    )
    op.create_index("ix_repos_due", "repos", ["watched", "next_poll_at"])

    op.create_table(
        "revisions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("repo_id", sa.Integer(), sa.ForeignKey("repos.id", ondelete="CASCADE"), nullable=False),
        sa.Column("sha", sa.String(40), nullable=False),
        sa.Column("parent_sha", sa.String(40), nullable=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("date", TS, nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("authors", sa.JSON(), nullable=False),
        sa.Column("stored_at", TS, nullable=False),
        sa.UniqueConstraint("repo_id", "sha", name="uq_revisions_repo_sha"),
    )
    op.create_index("ix_revisions_repo_position", "revisions", ["repo_id", "position"])
    op.create_index("ix_revisions_sha", "revisions", ["sha"])
    op.create_index("ix_revisions_date", "revisions", ["date"])

    op.create_table(
        "blobs",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("compression", sa.String(16), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("stored_at", TS, nullable=False),
    )

    op.create_table(
        "file_versions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("revision_id", sa.Integer(), sa.ForeignKey("revisions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=True),
        sa.Column("blob_id", sa.String(64), nullable=True),
        sa.Column("lfs_sha256", sa.String(64), nullable=True),
        sa.Column("content_sha256", sa.String(64), sa.ForeignKey("blobs.sha256"), nullable=True),
        sa.UniqueConstraint("revision_id", "path", name="uq_file_versions_revision_path"),
    )
    op.create_index("ix_file_versions_content", "file_versions", ["content_sha256"])

    op.create_table(
        "changes",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("revision_id", sa.Integer(), sa.ForeignKey("revisions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("direction", sa.String(8), nullable=False),
        sa.UniqueConstraint("revision_id", "ordinal", name="uq_changes_revision_ordinal"),
        sa.CheckConstraint("direction IN ('risk', 'fix')", name="ck_changes_direction"),
        sa.CheckConstraint("severity IN ('critical', 'high', 'medium', 'low', 'info')", name="ck_changes_severity"),
    )
    op.create_index("ix_changes_kind", "changes", ["kind"])

    op.create_table(
        "estimates",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("revision_id", sa.Integer(), sa.ForeignKey("revisions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("estimator_version", sa.String(64), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("revision_id", "estimator_version", name="uq_estimates_revision_version"),
    )

    op.create_table(
        "advisories",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("repo_id", sa.Integer(), sa.ForeignKey("repos.id", ondelete="CASCADE"), nullable=False),
        sa.Column("revision_id", sa.Integer(), sa.ForeignKey("revisions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("osv", sa.JSON(), nullable=False),
        sa.Column("published", TS, nullable=False),
        sa.Column("modified", TS, nullable=False),
        sa.Column("withdrawn", TS, nullable=True),
    )
    op.create_index("ix_advisories_repo", "advisories", ["repo_id"])
    op.create_index("ix_advisories_revision", "advisories", ["revision_id"])
    op.create_index("ix_advisories_modified", "advisories", ["modified"])

    op.create_table(
        "advisory_events",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "advisory_id",
            sa.String(200),
            sa.ForeignKey("advisories.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("range_index", sa.Integer(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("event", sa.String(16), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("range_repo", sa.Text(), nullable=True),
    )
    op.create_index("ix_advisory_events_advisory", "advisory_events", ["advisory_id"])
    op.create_index("ix_advisory_events_value", "advisory_events", ["value"])

    op.create_table(
        "poll_runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("repo_id", sa.Integer(), sa.ForeignKey("repos.id", ondelete="CASCADE"), nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("finished_at", TS, nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("new_revisions", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
    )
    op.create_index("ix_poll_runs_repo_started", "poll_runs", ["repo_id", "started_at"])


def downgrade() -> None:
    for table in (
        "poll_runs",
        "advisory_events",
        "advisories",
        "estimates",
        "changes",
        "file_versions",
        "blobs",
        "revisions",
        "repos",
    ):
        op.drop_table(table)
