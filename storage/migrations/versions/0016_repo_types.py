"""Repo types: a watched repo is a model or a dataset (`repos.repo_type`), and a model and a dataset
of one `org/name` are two rows.

- `repos.repo_type`: "model" or "dataset", "model" for every row stored before.
- The unique `(org, name)` becomes `(org, name, repo_type)` (in that order, so its index still serves
  the watch list's (org, name) order and keyset pages); `repos.key` (unique) is `RepoId.key`,
  `datasets/org/name` for a dataset, so it is unchanged for the models already stored.
- The id columns widen from 193 to 202 characters (the `datasets/` prefix): `repos.key` and
  `first_id`, `repo_aliases.key` and `renamed_to`, `notify_outbox.repo`.

On SQLite a unique constraint cannot be dropped, nor a column retyped, in place: the tables are
rebuilt (batch mode), which for `repos` is
safe only with foreign keys off, or dropping the old copy would delete every revision, advisory and
poll run through ON DELETE CASCADE. `hubwatch.storage.migrate.migration_transaction` turns them off
for the migration and checks every reference before the commit; this migration refuses to run on
a SQLite connection that has them on.

Revision ID: 0016_repo_types
Revises: 0015_history_restores
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_repo_types"
down_revision: str | None = "0015_history_restores"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WIDENED = (("repos", "key"), ("repos", "first_id"), ("repo_aliases", "key"), ("repo_aliases", "renamed_to"),
            ("notify_outbox", "repo"))  # fmt: skip


def _refuse_cascading_rebuild(conn: sa.Connection) -> None:
    if conn.execute(sa.text("PRAGMA foreign_keys")).scalar() == 1:
        raise RuntimeError(
            "0016_repo_types rebuilds the repos table and needs SQLite's foreign keys off (or the rebuild "
            "deletes the stored history): run it through hubwatch.storage.migrate (hubwatch migrate)"
        )


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        _refuse_cascading_rebuild(conn)
        with op.batch_alter_table("repos", recreate="always") as batch:
            batch.add_column(sa.Column("repo_type", sa.String(16), nullable=False, server_default="model"))
            batch.drop_constraint("uq_repos_org_name", type_="unique")
            batch.create_unique_constraint("uq_repos_org_name_type", ["org", "name", "repo_type"])
        _resize(193, 202)
        return
    op.add_column("repos", sa.Column("repo_type", sa.String(16), nullable=False, server_default="model"))
    op.drop_constraint("uq_repos_org_name", "repos", type_="unique")
    op.create_unique_constraint("uq_repos_org_name_type", "repos", ["org", "name", "repo_type"])
    _resize(193, 202)


def _resize(old: int, new: int) -> None:
    for table in dict.fromkeys(t for t, _ in _WIDENED):
        with op.batch_alter_table(table) as batch:  # in place on PostgreSQL; a copy on SQLite (keys off)
            for column in (c for t, c in _WIDENED if t == table):
                batch.alter_column(column, type_=sa.String(new), existing_type=sa.String(old), existing_nullable=False)


def downgrade() -> None:
    conn = op.get_bind()
    datasets = conn.execute(sa.text("SELECT count(*) FROM repos WHERE repo_type <> 'model'")).scalar_one()
    if datasets:  # a store before this revision cannot hold them, and dropping them is not a downgrade's call
        raise RuntimeError(f"the store holds {datasets} dataset repo(s), which 0015 cannot: keep this revision")
    if conn.dialect.name == "sqlite":
        _refuse_cascading_rebuild(conn)
        with op.batch_alter_table("repos", recreate="always") as batch:
            batch.drop_constraint("uq_repos_org_name_type", type_="unique")
            batch.create_unique_constraint("uq_repos_org_name", ["org", "name"])
            batch.drop_column("repo_type")
        _resize(202, 193)
        return
    op.drop_constraint("uq_repos_org_name_type", "repos", type_="unique")
    op.create_unique_constraint("uq_repos_org_name", "repos", ["org", "name"])
    op.drop_column("repos", "repo_type")
    _resize(202, 193)
