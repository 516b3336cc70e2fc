"""Writing one revision and everything derived from it, in the caller's (single) transaction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from hubwatch.storage.advisories.advisories import upsert_advisories
from hubwatch.storage.core.blobs import content_sha256, put_blobs, stored_shas
from hubwatch.storage.core.coltypes import checked_utc
from hubwatch.storage.errors import InvalidRecord
from hubwatch.storage.core.idempotent import insert_ignoring, insert_of
from hubwatch.storage.core.prepared import Prepared
from hubwatch.storage.revisions.estimates import drop_unused_bodies, insert_estimate
from hubwatch.storage.notify.notify import OutboxPolicy, enqueue_revision
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, FileRecord, RepoId, RevisionRecord
from hubwatch.storage.repos.repos import ensure_repo, find_repo, find_revision
from hubwatch.storage.core.summaries import bump_versions
from hubwatch.storage.core.tables import BLOBS, CHANGES, ESTIMATES, FILE_VERSIONS, REPOS, REVISIONS
from hubwatch.storage.core.validate import check_change, check_files, check_revision, clean_text, is_storable
from sqlalchemy.engine import Connection

__all__ = ["AlreadyStored", "add_file", "revision_exists", "save_changes", "save_estimate", "save_revision"]


class AlreadyStored(Exception):
    """Internal: the revision is already stored (maybe by a concurrent writer); roll back, return False."""


def revision_exists(conn: Connection, repo: RepoId, sha: str) -> bool:
    return find_revision(conn, repo, sha) is not None


def _position(conn: Connection, repo_id: int, parent: str | None) -> int:
    """Where the revision goes in the repo's linear history.

    Revisions of a repo arrive oldest first, so the default is "after everything stored"
    (the count of stored revisions). When the parent is stored, the revision goes right
    after it: after a history rewrite the new branch then takes the place of the abandoned
    one (both keep their rows; history() orders by position, then arrival).
    """
    row = conn.execute(_SLOT(conn), {"repo_id": repo_id, "parent": parent}).one()
    return _placed(row[0], row[1])


def _placed(parent_pos: int | None, count: int) -> int:
    return int(parent_pos) + 1 if parent_pos is not None else int(count)


def _slot_of(repo_id: sa.ColumnElement[int]) -> tuple[sa.ScalarSelect[Any], sa.ScalarSelect[Any]]:
    # The parent's position (NULL when it is not stored, or there is none) and the revision count.
    parent = (
        sa.select(REVISIONS.c.position)
        .where(REVISIONS.c.repo_id == repo_id, REVISIONS.c.sha == sa.bindparam("parent", type_=sa.String))
        .scalar_subquery()
    )
    count = sa.select(sa.func.count()).select_from(REVISIONS).where(REVISIONS.c.repo_id == repo_id).scalar_subquery()
    return parent, count


def _slot(_dialect: str) -> sa.Select[Any]:
    return sa.select(*_slot_of(sa.bindparam("repo_id", type_=sa.Integer)))


def _repo_slot(_dialect: str) -> sa.Select[Any]:
    # The repo's row id (by its key, as find_repo looks first) with its slot, in one statement.
    return sa.select(REPOS.c.id, *_slot_of(REPOS.c.id)).where(REPOS.c.key == sa.bindparam("key"))


def _head(dialect: str) -> sa.Update:
    # The summary columns in the same statement (storage.summaries): one more revision, a new version.
    repo_id = sa.bindparam("head_repo", type_=sa.Integer)  # not a column's name: that would be a SET
    newest: sa.ColumnElement[Any]
    if dialect == "sqlite":
        # One writer at a time (BEGIN IMMEDIATE): the revision just stored is the repo's stored last.
        newest = sa.bindparam("head_sha", type_=sa.String)
    else:
        # Writers run concurrently: the repo's revision stored last, whose id is at least that of
        # the one just stored, so the database reads the ids from there on, not every revision.
        newest = (
            sa.select(REVISIONS.c.sha)
            .where(REVISIONS.c.repo_id == repo_id, REVISIONS.c.id >= sa.bindparam("head_from", type_=sa.Integer))
            .order_by(REVISIONS.c.id.desc())
            .limit(1)
            .scalar_subquery()
        )
    return (
        sa.update(REPOS)
        .where(REPOS.c.id == repo_id)
        .values(
            head_sha=newest,
            revision_count=REPOS.c.revision_count + 1,
            history_version=REPOS.c.history_version + 1,
        )
    )


# Built once (storage.prepared): what a stored revision executes, parameters aside.
_SLOT = Prepared(_slot)
_REPO_SLOT = Prepared(_repo_slot)
_INSERT_REVISION = Prepared(
    lambda d: insert_of(d, REVISIONS).on_conflict_do_nothing(index_elements=["repo_id", "sha"]).returning(REVISIONS.c.id)
)
_INSERT_FILES = Prepared(lambda _d: sa.insert(FILE_VERSIONS))
_INSERT_CHANGES = Prepared(lambda _d: sa.insert(CHANGES))
_UPDATE_HEAD = Prepared(_head)


def save_revision(
    conn: Connection,
    repo: RepoId,
    revision: RevisionRecord,
    files: Sequence[FileRecord],
    contents: Mapping[str, bytes],
    changes: Sequence[ChangeRecord],
    estimate: tuple[str, dict[str, Any]] | None,
    advisories: Sequence[AdvisoryRecord],
    now: datetime,
    notify: OutboxPolicy | None = None,
) -> None:
    """Write the revision and all of its results; raises AlreadyStored when it exists. `notify`
    says what each subscription is sent (storage.notify).

    Runs inside the caller's transaction, which rolls everything back on any error.
    """
    check_revision(revision)
    check_files(files, contents)
    found: Sequence[Any] | None = None
    if isinstance(repo, RepoId):  # (find_repo below refuses anything else)
        found = conn.execute(_REPO_SLOT(conn), {"key": repo.key, "parent": revision.parent}).first()
    if found is not None:
        repo_id, position = int(found[0]), _placed(found[1], found[2])
    else:  # stored under an id it had before a rename (an alias), or not at all
        known = find_repo(conn, repo)
        repo_id = ensure_repo(conn, repo, now) if known is None else known
        position = _position(conn, repo_id, revision.parent)
    # Stored already (by this worker before, or a concurrent one): no row comes back (UNIQUE(repo_id, sha)).
    revision_id = conn.execute(
        _INSERT_REVISION(conn),
        {
            "repo_id": repo_id,
            "sha": revision.sha,
            "parent_sha": revision.parent,
            "position": position,
            "date": checked_utc(revision.date, f"date of revision {revision.sha}"),
            "title": clean_text(revision.title),
            "message": clean_text(revision.message),
            "authors": [clean_text(a) for a in revision.authors],
            "stored_at": now,
        },
    ).scalar_one_or_none()
    if revision_id is None:
        raise AlreadyStored(revision.sha)

    _save_files(conn, revision_id, files, contents, now)
    save_changes(conn, revision_id, changes)
    if estimate is not None:
        version, data = estimate
        _insert_estimate(conn, revision_id, version, data, now)
    # This revision's ids are known here, and _update_head raises the repo's version below.
    placed = {(repo.key, revision.sha): (repo_id, revision_id)}
    upsert_advisories(conn, advisories, now, known=placed, bumped=[repo_id])
    enqueue_revision(conn, repo_id, revision, changes, advisories, now, notify)  # the outbox: same transaction
    _update_head(conn, repo_id, revision_id, revision.sha)


def _save_files(
    conn: Connection,
    revision_id: int,
    files: Sequence[FileRecord],
    contents: Mapping[str, bytes],
    now: datetime,
) -> None:
    # Every fetched content in one lookup and one batched insert; every referenced one in one lookup.
    fetched = [f for f in files if f.path in contents]
    stored = dict(zip((f.path for f in fetched), put_blobs(conn, [contents[f.path] for f in fetched], now)))
    referenced = {f.content_sha256 for f in files if f.path not in contents and f.content_sha256 is not None}
    missing = referenced - stored_shas(conn, referenced)
    rows = []
    for f in files:
        content_sha = f.content_sha256
        if f.path in stored:
            if content_sha is not None and content_sha != stored[f.path]:
                raise InvalidRecord(
                    f"{f.path!r}: content_sha256 {content_sha} does not match the sha256 of its content ({stored[f.path]})"
                )
            content_sha = stored[f.path]
        elif content_sha in missing:
            raise InvalidRecord(f"{f.path!r} refers to blob {content_sha}, which is not stored")
        rows.append(
            {
                "revision_id": revision_id,
                "path": clean_text(f.path),
                "size": f.size,
                "blob_id": f.blob_id,
                "lfs_sha256": f.lfs_sha256,
                "content_sha256": content_sha,
            }
        )
    if rows:
        conn.execute(_INSERT_FILES(conn), rows)


def add_file(conn: Connection, repo: RepoId, sha: str, record: FileRecord, content: bytes, now: datetime) -> bool:
    """Add one file, with its content, to the listing of the stored revision `sha` (a derived file
    learnt after the revision was stored: a dataset head's late parquet conversion) and raise the
    repo's history version. False, nothing written, when the revision is not stored or its listing
    has that path already (added before, by this worker or a concurrent one: the first one stays)."""
    check_files([record], {record.path: content})
    if record.content_sha256 is not None and record.content_sha256 != content_sha256(content):
        raise InvalidRecord(f"{record.path!r}: content_sha256 {record.content_sha256} does not match the sha256 of its content")
    revision_id = find_revision(conn, repo, sha)
    if revision_id is None:
        return False
    held = sa.and_(FILE_VERSIONS.c.revision_id == revision_id, FILE_VERSIONS.c.path == record.path)
    if conn.execute(sa.select(FILE_VERSIONS.c.id).where(held)).first() is not None:
        return False  # no blob is written for a file that is not added
    (blob,) = put_blobs(conn, [content], now)
    row = {"revision_id": revision_id, "path": clean_text(record.path), "size": record.size, "blob_id": record.blob_id,
           "lfs_sha256": record.lfs_sha256, "content_sha256": blob}  # fmt: skip
    added = conn.execute(
        insert_ignoring(conn, FILE_VERSIONS, ["revision_id", "path"]).values(**row).returning(FILE_VERSIONS.c.id)
    ).scalar_one_or_none()  # a concurrent worker's row, added since the lookup, stays
    if added is None:
        return False
    repo_id = conn.execute(sa.select(REVISIONS.c.repo_id).where(REVISIONS.c.id == revision_id)).scalar_one()
    bump_versions(conn, [repo_id])  # what is derived from the listing (facts, cost panels) is stale
    return True


def save_changes(conn: Connection, revision_id: int, changes: Sequence[ChangeRecord]) -> None:
    rows = []
    for ordinal, change in enumerate(changes):
        kind, severity, direction = check_change(change, ordinal)
        rows.append(
            {
                "revision_id": revision_id,
                "ordinal": ordinal,
                "kind": kind,
                "severity": severity,
                "path": clean_text(change.path),
                "summary": clean_text(change.summary),
                "detail": change.detail,
                "direction": direction,
            }
        )
    if rows:
        conn.execute(_INSERT_CHANGES(conn), rows)


def _check_estimate(version: str, data: dict[str, Any]) -> None:
    if not isinstance(version, str) or not 0 < len(version) <= 64 or not is_storable(version):
        raise InvalidRecord(f"estimator version must be a string of 1 to 64 characters without NUL, got {version!r}")
    if not isinstance(data, dict):
        raise InvalidRecord(f"estimate must be a JSON object, got {type(data).__name__}")
    # That it is plain JSON is checked where its body is encoded for its digest (estimates.body_of).


def _insert_estimate(conn: Connection, revision_id: int, version: str, data: dict[str, Any], now: datetime) -> None:
    _check_estimate(version, data)
    insert_estimate(conn, revision_id, version, data, now)  # the body once, however many revisions share it


def save_estimate(conn: Connection, repo: RepoId, sha: str, version: str, data: dict[str, Any], now: datetime) -> bool:
    """Store (or replace) the estimate of a stored revision for one estimator version.

    Returns False when the revision is not stored.
    """
    _check_estimate(version, data)
    revision_id = find_revision(conn, repo, sha)
    if revision_id is None:
        return False
    replaced = sa.and_(ESTIMATES.c.revision_id == revision_id, ESTIMATES.c.estimator_version == version)
    old_bodies = set(conn.execute(sa.select(ESTIMATES.c.body_sha256).where(replaced)).scalars())
    conn.execute(sa.delete(ESTIMATES).where(replaced))
    _insert_estimate(conn, revision_id, version, data, now)
    drop_unused_bodies(conn, old_bodies)  # a body no other revision shares goes with its estimate
    repo_id = find_repo(conn, repo)
    assert repo_id is not None  # the revision is stored
    bump_versions(conn, [repo_id])  # what derives from the estimates (the charts) is stale
    return True


def _update_head(conn: Connection, repo_id: int, stored_id: int, stored_sha: str) -> None:
    """The repo's head (its revision stored last: `stored_id`, or a later one) and summary after a stored revision."""
    conn.execute(_UPDATE_HEAD(conn), {"head_repo": repo_id, "head_from": stored_id, "head_sha": stored_sha})
