"""`poll_cycles.requests_3xx` and `requests_failed`: redirects and requests that got no answer.

Every request a poll cycle sends is now counted once, at the hub client's transport: 2xx in
`requests_ok` (rows before this migration also hold their 3xx there), 3xx (a renamed repo's 307)
in `requests_3xx`, and a request with no answer at all (connection refused or reset, timeout) in
`requests_failed`. Existing rows get 0 in both.

Revision ID: 0011_poll_cycle_requests
Revises: 0010_families
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_poll_cycle_requests"
down_revision: str | None = "0010_families"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ("requests_3xx", "requests_failed")


def upgrade() -> None:
    with op.batch_alter_table("poll_cycles") as batch:
        for name in _COLUMNS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default="0"))
    with op.batch_alter_table("poll_cycles") as batch:  # the model has no server default
        for name in _COLUMNS:
            batch.alter_column(name, server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("poll_cycles") as batch:
        for name in reversed(_COLUMNS):
            batch.drop_column(name)
