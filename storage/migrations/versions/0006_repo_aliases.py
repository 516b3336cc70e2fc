"""Repo ids match case-insensitively and follow renames: `repos.key`, `repos.first_id`, `repo_aliases`.

- `repos.key`: the lowercased `org/name`, unique (the hub resolves `Org/Name` and `org/name` to
  one repo, so the store holds one row for them).
- `repos.first_id`: the id the store first knew the repo by; feed entry ids are derived from it,
  so a rename does not make old entries look new.
- `repo_aliases`: ids a repo had before a rename upstream (key unique, the old spelling, the row,
  the id it went to, when it was seen).

A store made before this revision may hold one repo under two spellings (`watch add Org/Name`
beside `org/name`). They are merged into one row before the key is made unique: the row with the
most stored revisions is kept (on a tie the oldest row); it is watched when any of them was; the
other rows are deleted with what hangs off them (their revisions, changes, advisories, poll runs,
rewrites: the same upstream history stored twice).

Revision ID: 0006_repo_aliases
Revises: 0005_liveness
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_repo_aliases"
down_revision: str | None = "0005_liveness"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# What hangs off a repo row, deleted with a merged-away duplicate (children before parents).
_BY_REVISION = ("file_versions", "changes", "estimates")
_BY_REPO = ("poll_runs", "history_rewrites")


def _delete_repo(conn: sa.Connection, repo_id: int) -> None:
    params = {"repo": repo_id}
    conn.execute(
        sa.text("DELETE FROM advisory_events WHERE advisory_id IN (SELECT id FROM advisories WHERE repo_id = :repo)"),
        params,
    )
    conn.execute(sa.text("DELETE FROM advisories WHERE repo_id = :repo"), params)
    for table in _BY_REVISION:
        conn.execute(
            sa.text(f"DELETE FROM {table} WHERE revision_id IN (SELECT id FROM revisions WHERE repo_id = :repo)"),
            params,
        )
    conn.execute(sa.text("DELETE FROM revisions WHERE repo_id = :repo"), params)
    for table in _BY_REPO:
        conn.execute(sa.text(f"DELETE FROM {table} WHERE repo_id = :repo"), params)
    conn.execute(sa.text("DELETE FROM repos WHERE id = :repo"), params)


def merge_duplicate_spellings(conn: sa.Connection) -> int:
    """Merge rows whose org/name differ only in case; how many rows were deleted."""
    rows = conn.execute(
        sa.text(
            "SELECT r.id, r.org, r.name, r.watched, "
            "(SELECT count(*) FROM revisions v WHERE v.repo_id = r.id) AS revisions FROM repos r"
        )
    ).all()
    groups: dict[str, list[sa.Row[tuple[int, str, str, bool, int]]]] = defaultdict(list)
    for row in rows:
        groups[f"{row.org}/{row.name}".lower()].append(row)
    deleted = 0
    for group in groups.values():
        if len(group) < 2:
            continue
        keep = max(group, key=lambda r: (int(r.revisions), -int(r.id)))
        watched = any(bool(r.watched) for r in group)
        for row in group:
            if row.id != keep.id:
                _delete_repo(conn, int(row.id))
                deleted += 1
        conn.execute(sa.text("UPDATE repos SET watched = :w WHERE id = :id"), {"w": watched, "id": keep.id})
    return deleted


def upgrade() -> None:
    # Plain ADD COLUMN (NOT NULL with a default, then backfilled) and a unique index, never batch
    # mode: on SQLite batch mode copies `repos` and drops the original, and dropping a parent table
    # with foreign keys on deletes every revision, advisory and poll run through ON DELETE CASCADE.
    op.add_column("repos", sa.Column("key", sa.String(193), nullable=False, server_default=""))
    op.add_column("repos", sa.Column("first_id", sa.String(193), nullable=False, server_default=""))
    conn = op.get_bind()
    merge_duplicate_spellings(conn)
    conn.execute(sa.text("UPDATE repos SET key = lower(org || '/' || name), first_id = org || '/' || name"))
    op.create_index("uq_repos_key", "repos", ["key"], unique=True)
    op.create_table(
        "repo_aliases",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("key", sa.String(193), nullable=False),
        sa.Column("org", sa.String(96), nullable=False),
        sa.Column("name", sa.String(96), nullable=False),
        sa.Column("repo_id", sa.Integer(), sa.ForeignKey("repos.id", ondelete="CASCADE"), nullable=False),
        sa.Column("renamed_to", sa.String(193), nullable=False),
        sa.Column("renamed_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("key", name="uq_repo_aliases_key"),
    )
    op.create_index("ix_repo_aliases_repo", "repo_aliases", ["repo_id"])


def downgrade() -> None:
    op.drop_index("ix_repo_aliases_repo", table_name="repo_aliases")
    op.drop_table("repo_aliases")
    op.drop_index("uq_repos_key", table_name="repos")
    op.drop_column("repos", "first_id")  # SQLite ≥ 3.35 drops a column in place (no table copy)
    op.drop_column("repos", "key")
