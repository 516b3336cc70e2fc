"""Re-derived results: a repo's changes and advisories replaced in one transaction, and the
advisory model the store's records were derived with (the `store_meta` table), which also holds
until when every worker defers calling the hub (`defer_hub`, `hub_deferred_until`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone

import sqlalchemy as sa
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, FileRecord, RepoId
from hubwatch.storage.core.idempotent import dialect_insert
from hubwatch.storage.advisories.advisories import upsert_advisories
from hubwatch.storage.errors import InvalidRecord
from hubwatch.storage.notify.notify import OutboxPolicy, enqueue_rederived, unseen_advisories
from hubwatch.storage.repos.repos import find_repo, find_revision
from hubwatch.storage.revisions.revisions import add_file, save_changes
from hubwatch.storage.core.tables import CHANGES, STORE_META
from sqlalchemy.engine import Connection

__all__ = ["HUB_DEFERRED_KEY", "defer_hub", "get_meta", "hub_deferred_until", "replace_derived", "set_meta"]

HUB_DEFERRED_KEY = "hub_deferred_until"
_UNTIL_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"  # fixed width, UTC: text order is time order


def get_meta(conn: Connection, key: str) -> str | None:
    """The stored value of `key`, or None."""
    value = conn.execute(sa.select(STORE_META.c.value).where(STORE_META.c.key == key)).scalar_one_or_none()
    return None if value is None else str(value)


def set_meta(conn: Connection, key: str, value: str) -> None:
    stmt = dialect_insert(conn, STORE_META).values(key=key, value=value)
    conn.execute(stmt.on_conflict_do_update(index_elements=["key"], set_={"value": stmt.excluded.value}))


def defer_hub(conn: Connection, until: datetime) -> None:
    """Record that no worker calls the hub before `until` (one upsert; an earlier `until` never
    shortens a later one already stored)."""
    value = until.astimezone(timezone.utc).strftime(_UNTIL_FORMAT)
    stmt = dialect_insert(conn, STORE_META).values(key=HUB_DEFERRED_KEY, value=value)
    later = sa.case((stmt.excluded.value > STORE_META.c.value, stmt.excluded.value), else_=STORE_META.c.value)
    conn.execute(stmt.on_conflict_do_update(index_elements=["key"], set_={"value": later}))


def hub_deferred_until(conn: Connection) -> datetime | None:
    """Until when the workers defer calling the hub (may be past), or None when never recorded."""
    value = get_meta(conn, HUB_DEFERRED_KEY)
    if not value:
        return None
    try:
        return datetime.strptime(value, _UNTIL_FORMAT).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def replace_derived(
    conn: Connection,
    repo: RepoId,
    changes: Mapping[str, Sequence[ChangeRecord]],
    advisories: Sequence[AdvisoryRecord],
    now: datetime,
    notify: OutboxPolicy | None = None,
    files: Mapping[str, tuple[FileRecord, bytes]] | None = None,
) -> None:
    """Replace the stored changes of each revision in `changes` and upsert `advisories` (later
    `modified` wins, as for any save); first add `files` (sha → a derived file and its content,
    `add_file`) that they were derived with, so a crash never leaves the file without its results.
    The caller runs it in one transaction per repo."""
    for sha, (record, content) in (files or {}).items():
        add_file(conn, repo, sha, record, content, now)
    for sha, records in changes.items():
        revision_id = find_revision(conn, repo, sha)
        if revision_id is None:
            raise InvalidRecord(f"{repo}@{sha} is not stored: its changes cannot be replaced")
        conn.execute(sa.delete(CHANGES).where(CHANGES.c.revision_id == revision_id))
        save_changes(conn, revision_id, records)
    fresh = unseen_advisories(conn, advisories)  # raised for the first time: announced once (storage.notify)
    upsert_advisories(conn, advisories, now)
    repo_id = find_repo(conn, repo)
    if fresh and repo_id is not None:
        enqueue_rederived(conn, repo_id, fresh, now, notify)
