"""Recent changes across repos, newest first, filtered by repo, org, kind and severity (for feeds)."""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
from hubwatch.storage.errors import InvalidRecord
from hubwatch.storage.revisions.history import advisory_ids_of, changes_of, revision_record
from hubwatch.domain.records import Kind, RepoId, RepoType, Severity
from hubwatch.storage.repos.repos import in_scope
from hubwatch.storage.core.tables import CHANGES, REPOS, REVISIONS
from hubwatch.storage.core.values import FeedItem
from sqlalchemy.engine import Connection

__all__ = ["recent_changes"]


def _kinds(kinds: Iterable[Kind | str] | None) -> list[str] | None:
    if kinds is None:
        return None
    out = []
    for k in kinds:
        try:
            out.append(Kind(k).value)
        except ValueError as exc:
            valid = ", ".join(x.value for x in Kind)
            raise InvalidRecord(f"unknown change kind {k!r}; one of: {valid}") from exc
    return out


def _severities(min_severity: Severity | str | None) -> list[str] | None:
    if min_severity is None:
        return None
    try:
        floor = Severity(min_severity)
    except ValueError as exc:
        valid = ", ".join(s.value for s in Severity)
        raise InvalidRecord(f"unknown severity {min_severity!r}; one of: {valid}") from exc
    return [s.value for s in Severity if s.rank >= floor.rank]


def recent_changes(
    conn: Connection,
    limit: int,
    repo: RepoId | None = None,
    org: str | None = None,
    kinds: Iterable[Kind | str] | None = None,
    min_severity: Severity | str | None = None,
) -> list[FeedItem]:
    """The `limit` newest revisions (by commit date, then arrival) with at least one matching change.

    Each item carries only the changes that match the filters, in their stored order.
    """
    if limit <= 0:
        return []
    kind_values = _kinds(kinds)
    severity_values = _severities(min_severity)
    match: sa.ColumnElement[bool] = sa.true()
    if kind_values is not None:
        match = sa.and_(match, CHANGES.c.kind.in_(kind_values))
    if severity_values is not None:
        match = sa.and_(match, CHANGES.c.severity.in_(severity_values))
    has_match = sa.exists().where(CHANGES.c.revision_id == REVISIONS.c.id, match)
    query = (
        sa.select(REVISIONS, REPOS.c.org, REPOS.c.name, REPOS.c.repo_type, REPOS.c.first_id)
        .join(REPOS, REPOS.c.id == REVISIONS.c.repo_id)
        .where(has_match)
        .order_by(REVISIONS.c.date.desc(), REVISIONS.c.id.desc())
        .where(in_scope(repo, org))
        .limit(limit)
    )
    rows = conn.execute(query).all()
    ids = [r.id for r in rows]
    changes = changes_of(conn, ids, where=match)
    advisories = advisory_ids_of(conn, ids)
    return [
        FeedItem(
            repo=RepoId(r.org, r.name, RepoType(r.repo_type)),
            revision=revision_record(r),
            changes=changes.get(r.id, []),
            advisory_ids=advisories.get(r.id, []),
            origin=RepoId.parse(r.first_id) if r.first_id else None,
        )
        for r in rows
    ]
