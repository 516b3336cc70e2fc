"""Re-derived results: a repo's changes and advisories replaced in one transaction, and the
advisory model the store's records were derived with (the `store_meta` table)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import sqlalchemy as sa
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, RepoId
from hubwatch.storage.advisories import upsert_advisories
from hubwatch.storage.errors import InvalidRecord
from hubwatch.storage.repos import find_revision
from hubwatch.storage.revisions import save_changes
from hubwatch.storage.tables import CHANGES, STORE_META
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

__all__ = ["get_meta", "replace_derived", "set_meta"]


def get_meta(conn: Connection, key: str) -> str | None:
    """The stored value of `key`, or None."""
    value = conn.execute(sa.select(STORE_META.c.value).where(STORE_META.c.key == key)).scalar_one_or_none()
    return None if value is None else str(value)


def set_meta(conn: Connection, key: str, value: str) -> None:
    dialect = sqlite if conn.dialect.name == "sqlite" else postgresql
    stmt = dialect.insert(STORE_META).values(key=key, value=value)
    conn.execute(stmt.on_conflict_do_update(index_elements=["key"], set_={"value": stmt.excluded.value}))


def replace_derived(
    conn: Connection,
    repo: RepoId,
    changes: Mapping[str, Sequence[ChangeRecord]],
    advisories: Sequence[AdvisoryRecord],
    now: datetime,
) -> None:
    """Replace the stored changes of each revision in `changes` and upsert `advisories` (later
    `modified` wins, as for any save). The caller runs it in one transaction per repo."""
    for sha, records in changes.items():
        revision_id = find_revision(conn, repo, sha)
        if revision_id is None:
            raise InvalidRecord(f"{repo}@{sha} is not stored: its changes cannot be replaced")
        conn.execute(sa.delete(CHANGES).where(CHANGES.c.revision_id == revision_id))
        save_changes(conn, revision_id, records)
    upsert_advisories(conn, advisories, now)
