"""Renames upstream: the repo row takes the new id and keeps its history; the old id becomes an alias.

Every lookup by id (`repos.repo_match`, `repos.find_repo`) matches the row's key or an alias key,
so the old id — and any spelling of either — finds the one row: history, leases, advisories and
their ids stay where they were.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from hubwatch.domain.records import RepoId, RepoType
from hubwatch.storage.core.coltypes import checked_utc
from hubwatch.storage.repos.repos import ensure_repo, find_repo, in_scope
from hubwatch.storage.core.tables import REPO_ALIASES, REPOS, REVISIONS
from hubwatch.storage.core.values import RepoRename
from hubwatch.storage.errors import InvalidRecord
from sqlalchemy.engine import Connection

__all__ = ["recent_renames", "rename_repo", "repo_renames"]


def _revision_count(conn: Connection, repo_id: int) -> int:
    return int(
        conn.execute(sa.select(sa.func.count()).select_from(REVISIONS).where(REVISIONS.c.repo_id == repo_id)).scalar_one()
    )


def _merge(conn: Connection, keep: int, other: int) -> int:
    """Fold row `other` into `keep` (the same upstream repo stored twice): the row with more stored
    revisions survives (`keep` on a tie), watched when either was; the other is deleted with what
    hangs off it (ON DELETE CASCADE) and its aliases point at the survivor. The survivor's id."""
    if _revision_count(conn, other) > _revision_count(conn, keep):
        keep, other = other, keep
    watched = conn.execute(sa.select(sa.func.max(sa.case((REPOS.c.watched, 1), else_=0))).where(
        REPOS.c.id.in_([keep, other])
    )).scalar_one()
    conn.execute(sa.update(REPO_ALIASES).where(REPO_ALIASES.c.repo_id == other).values(repo_id=keep))
    conn.execute(sa.delete(REPOS).where(REPOS.c.id == other))
    conn.execute(
        sa.update(REPOS)
        .where(REPOS.c.id == keep)
        .values(watched=bool(watched), history_version=REPOS.c.history_version + 1)
    )
    return keep


def rename_repo(conn: Connection, old: RepoId, new: RepoId, at: datetime) -> bool:
    """Record that the hub answers `new` for `old`: the row of `old` takes the id `new` (spelled as
    given) and `old` becomes an alias of it. True when this was a rename (another key) not recorded
    before; False for a repeat, or when only the spelling's case changed (the row is re-spelled, no
    alias: both spellings already match it). Idempotent. When `new` is stored as a separate row
    too, the two are merged (see `_merge`)."""
    at = checked_utc(at, "rename time")
    if old.repo_type is not new.repo_type:
        raise InvalidRecord(f"a rename keeps the repo's type: {old} cannot become {new}")
    row_id = find_repo(conn, old)
    new_id = find_repo(conn, new)
    if row_id is None:
        row_id = new_id if new_id is not None else ensure_repo(conn, old, at)
    was = conn.execute(sa.select(REPOS.c.org, REPOS.c.name, REPOS.c.key, REPOS.c.repo_type).where(REPOS.c.id == row_id)).one()
    if new_id is not None and new_id != row_id:
        row_id = _merge(conn, row_id, new_id)
    # The new id is the row's own now: an alias with that key (a rename back) would shadow nothing.
    conn.execute(sa.delete(REPO_ALIASES).where(REPO_ALIASES.c.key == new.key))
    conn.execute(sa.update(REPOS).where(REPOS.c.id == row_id).values(
        org=new.org, name=new.name, key=new.key, history_version=REPOS.c.history_version + 1
    ))
    if was.key == new.key:
        return False  # a repeat, or only the case of the spelling changed
    values = {"org": was.org, "name": was.name, "repo_id": row_id, "renamed_to": str(new), "renamed_at": at}
    known = conn.execute(
        sa.select(REPO_ALIASES.c.repo_id, REPO_ALIASES.c.renamed_to).where(REPO_ALIASES.c.key == was.key)
    ).first()
    if known is None:
        conn.execute(sa.insert(REPO_ALIASES).values(key=was.key, **values))
    elif (known.repo_id, known.renamed_to) != (row_id, str(new)):
        conn.execute(sa.update(REPO_ALIASES).where(REPO_ALIASES.c.key == was.key).values(**values))
    else:
        return False
    return True


def _select() -> sa.Select[tuple[object, ...]]:
    return sa.select(
        REPO_ALIASES.c.org.label("old_org"),
        REPO_ALIASES.c.name.label("old_name"),
        REPO_ALIASES.c.renamed_to,
        REPO_ALIASES.c.renamed_at,
        REPOS.c.org,
        REPOS.c.name,
        REPOS.c.repo_type,
        REPOS.c.first_id,
    ).join(REPOS, REPOS.c.id == REPO_ALIASES.c.repo_id)


def _rename(r: sa.Row[tuple[object, ...]]) -> RepoRename:
    m = r._mapping
    return RepoRename(
        repo=RepoId(str(m["org"]), str(m["name"]), RepoType(m["repo_type"])),
        old=RepoId(str(m["old_org"]), str(m["old_name"]), RepoType(m["repo_type"])),
        new=RepoId.parse(str(m["renamed_to"])),
        renamed_at=m["renamed_at"],
        origin=RepoId.parse(str(m["first_id"])) if m["first_id"] else None,
    )


def repo_renames(conn: Connection, repo: RepoId) -> list[RepoRename]:
    """The renames recorded for `repo` (found by any of its ids), oldest first."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return []
    query = _select().where(REPO_ALIASES.c.repo_id == repo_id).order_by(REPO_ALIASES.c.renamed_at, REPO_ALIASES.c.id)
    return [_rename(r) for r in conn.execute(query)]


def recent_renames(conn: Connection, limit: int, repo: RepoId | None = None, org: str | None = None) -> list[RepoRename]:
    """The `limit` newest renames (of one repo, one org or all), newest first (for feeds)."""
    if limit <= 0:
        return []
    query = (
        _select()
        .where(in_scope(repo, org))
        .order_by(REPO_ALIASES.c.renamed_at.desc(), REPO_ALIASES.c.id.desc())
        .limit(limit)
    )
    return [_rename(r) for r in conn.execute(query)]
