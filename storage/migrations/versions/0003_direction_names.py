"""The two meanings of an advised change get their names: risk → hazard, fix → update.

Rewrites `changes.direction` and the `direction` fields inside stored OSV records (the record's and
each of its changes'); advisory ids are derived from the old words and do not change.

Revision ID: 0003_direction_names
Revises: 0002_history_rewrites
Create Date: 2026-12-01
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0003_direction_names"
down_revision: str | None = "0002_history_rewrites"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_NEW = {"risk": "hazard", "fix": "update"}
_OLD = {new: old for old, new in _NEW.items()}


def _rename_in(osv: Any, names: dict[str, str]) -> Any:
    if not isinstance(osv, dict) or not isinstance(osv.get("database_specific"), dict):
        return osv
    out = copy.deepcopy(osv)
    ds = out["database_specific"]
    if ds.get("direction") in names:
        ds["direction"] = names[ds["direction"]]
    for change in ds.get("changes") or []:
        if isinstance(change, dict) and change.get("direction") in names:
            change["direction"] = names[change["direction"]]
            detail = change.get("detail")
            if isinstance(detail, dict) and detail.get("direction") in names:
                detail["direction"] = names[detail["direction"]]
    return out


def _migrate(names: dict[str, str], allowed: str) -> None:
    with op.batch_alter_table("changes") as batch:
        batch.drop_constraint("ck_changes_direction", type_="check")
    changes = sa.table("changes", sa.column("direction", sa.String), sa.column("id", sa.Integer),
                       sa.column("detail", sa.JSON))  # fmt: skip
    conn = op.get_bind()
    for old, new in names.items():
        conn.execute(changes.update().where(changes.c.direction == old).values(direction=new))
    for row_id, detail in conn.execute(sa.select(changes.c.id, changes.c.detail)).all():
        if isinstance(detail, dict) and detail.get("direction") in names:
            conn.execute(changes.update().where(changes.c.id == row_id)
                         .values(detail={**detail, "direction": names[detail["direction"]]}))  # fmt: skip
    with op.batch_alter_table("changes") as batch:
        batch.create_check_constraint("ck_changes_direction", f"direction IN {allowed}")
    advisories = sa.table("advisories", sa.column("id", sa.String), sa.column("osv", sa.JSON))
    for advisory_id, osv in conn.execute(sa.select(advisories.c.id, advisories.c.osv)).all():
        renamed = _rename_in(osv, names)
        if renamed != osv:
            conn.execute(advisories.update().where(advisories.c.id == advisory_id).values(osv=renamed))


def upgrade() -> None:
    _migrate(_NEW, "('hazard', 'update')")


def downgrade() -> None:
    _migrate(_OLD, "('risk', 'fix')")
