"""The index page's reads: watched repos found by name and filtered by org, repo type (models or
datasets), change kind, severity and date, and each one's newest matching revision — a fixed number of queries however many repos match."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from hubwatch.domain.records import Kind, RepoId, RepoType, Severity
from hubwatch.storage.errors import InvalidRecord
from hubwatch.storage.revisions.history import advisory_ids_of, changes_of, revision_record
from hubwatch.storage.repos.repos import repo_states, repos_match
from hubwatch.storage.core.tables import CHANGES, REPOS, REVISIONS
from hubwatch.storage.core.values import FeedItem, RepoState

__all__ = ["IndexFilter", "filtered_repos", "latest_matching"]

_MAX_QUERY = 200  # characters of a name search


@dataclass(frozen=True)
class IndexFilter:
    """What the index asks for: `q` a part of org/name (any case), one org, one repo type (models
    or datasets), the change kinds, a lowest severity, revisions dated at or after `since`. Empty
    fields filter nothing."""

    q: str = ""
    org: str | None = None
    repo_type: RepoType | None = None
    kinds: tuple[Kind, ...] = ()
    min_severity: Severity | None = None
    since: datetime | None = None

    @property
    def on_changes(self) -> bool:
        """Whether a repo must have a matching change (not only a matching name)."""
        return bool(self.kinds) or self.min_severity is not None or self.since is not None


def _like(text: str) -> str:
    """`text` as a LIKE pattern matching it anywhere, its wildcards taken literally (escape `\\`)."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _change_match(f: IndexFilter) -> sa.ColumnElement[bool]:
    """The condition on a (changes ⋈ revisions) row for the filter's kinds, severity and date."""
    condition: sa.ColumnElement[bool] = CHANGES.c.revision_id == REVISIONS.c.id
    if f.kinds:
        condition = sa.and_(condition, CHANGES.c.kind.in_([k.value for k in f.kinds]))
    if f.min_severity is not None:
        floor = f.min_severity.rank
        condition = sa.and_(condition, CHANGES.c.severity.in_([s.value for s in Severity if s.rank >= floor]))
    if f.since is not None:
        condition = sa.and_(condition, REVISIONS.c.date >= f.since)
    return condition


def filtered_repos(
    conn: Connection, f: IndexFilter, offset: int = 0, limit: int | None = None, after: RepoId | None = None
) -> list[RepoState]:
    """Watched repos matching `f`, ordered by org/name, `limit` of them after the keyset cursor
    `after` (or from `offset`): one query."""
    if len(f.q) > _MAX_QUERY:
        raise InvalidRecord(f"a name search is at most {_MAX_QUERY} characters, got {len(f.q)}")
    condition: sa.ColumnElement[bool] = sa.true()
    if f.q:
        condition = sa.and_(condition, REPOS.c.key.like(_like(f.q.strip()), escape="\\"))
    if f.repo_type is not None:
        condition = sa.and_(condition, REPOS.c.repo_type == f.repo_type.value)
    if f.on_changes:
        matching = sa.select(REVISIONS.c.id).join(CHANGES, _change_match(f)).where(REVISIONS.c.repo_id == REPOS.c.id)
        condition = sa.and_(condition, matching.exists())
    return repo_states(conn, org=f.org, offset=offset, limit=limit, where=condition, after=after)


def latest_matching(conn: Connection, repos: Sequence[RepoId], f: IndexFilter) -> dict[RepoId, FeedItem]:
    """For each repo, its newest revision (by commit date, then arrival) with a change matching `f`
    (any change when `f` filters none), with all its changes: three queries for all of `repos`.

    Each repo's is found by walking its revisions newest first on `ix_revisions_repo_date` until
    one matches (a subquery per repo, `LIMIT 1`), not by ranking every revision of every repo."""
    if not repos:
        return {}
    has_match = sa.exists().where(_change_match(f)).select_from(CHANGES)
    newest = (
        sa.select(REVISIONS.c.id)
        .where(REVISIONS.c.repo_id == REPOS.c.id, has_match)
        .order_by(REVISIONS.c.date.desc(), REVISIONS.c.id.desc())
        .limit(1)
        .correlate(REPOS)
        .scalar_subquery()
    )
    picked = sa.select(newest).select_from(REPOS).where(repos_match(repos))
    rows = conn.execute(
        sa.select(REVISIONS, REPOS.c.org, REPOS.c.name, REPOS.c.repo_type, REPOS.c.first_id)
        .join(REPOS, REPOS.c.id == REVISIONS.c.repo_id)
        .where(REVISIONS.c.id.in_(picked))
    ).all()
    ids = [r.id for r in rows]
    changes = changes_of(conn, ids)
    advisories = advisory_ids_of(conn, ids)
    return {
        RepoId(r.org, r.name, RepoType(r.repo_type)): FeedItem(
            repo=RepoId(r.org, r.name, RepoType(r.repo_type)),
            revision=revision_record(r),
            changes=changes.get(r.id, []),
            advisory_ids=advisories.get(r.id, []),
            origin=RepoId.parse(r.first_id) if r.first_id else None,
        )
        for r in rows
    }
