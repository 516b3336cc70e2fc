"""Finding stored revisions: by full sha or a unique prefix of at least 7 hex characters; the main line."""

from __future__ import annotations

import sqlalchemy as sa
from hubwatch.storage.errors import AmbiguousRevision
from hubwatch.domain.records import RepoId
from hubwatch.storage.revisions.ancestry import StoredRevision, lineage
from hubwatch.storage.repos.repos import repo_match
from hubwatch.storage.core.tables import REPOS, REVISIONS
from hubwatch.storage.core.validate import as_prefix, prefix_match
from sqlalchemy.engine import Connection

__all__ = ["resolve_sha", "revision_shas", "stored_revisions"]


def resolve_sha(conn: Connection, repo_id: int, sha: str) -> str | None:
    """The full sha of the one stored revision of the repo matching `sha`; None when none does
    (also when `sha` is not 7 to 40 hex characters). Raises AmbiguousRevision for a shared prefix."""
    prefix = as_prefix(sha)
    if prefix is None:
        return None
    query = sa.select(REVISIONS.c.sha).where(REVISIONS.c.repo_id == repo_id, prefix_match(REVISIONS.c.sha, prefix))
    found = list(conn.execute(query.limit(5)).scalars())
    if len(found) > 1:
        raise AmbiguousRevision(
            f"commit prefix {prefix!r} matches several revisions: {', '.join(s[:12] for s in found)}…"
        )
    return found[0] if found else None


def stored_revisions(conn: Connection, repo_id: int) -> list[StoredRevision]:
    rows = conn.execute(
        sa.select(REVISIONS.c.id, REVISIONS.c.sha, REVISIONS.c.parent_sha, REVISIONS.c.position).where(
            REVISIONS.c.repo_id == repo_id
        )
    )
    return [StoredRevision(r.id, r.sha, r.parent_sha, r.position) for r in rows]


def revision_shas(conn: Connection, repo: RepoId, tip: str | None = None) -> list[str] | None:
    """The repo's main line, oldest → newest: the head's ancestors by parent links (revisions a
    force-push dropped are not on it); with `tip` (a stored full sha), that revision's ancestors
    instead. None when the repo is not stored; [] when it has no revision.

    One query (repos joined to revisions on the (repo_id, position) index); the walk is in memory.
    """
    rows = conn.execute(
        sa.select(REPOS.c.head_sha, REVISIONS.c.id, REVISIONS.c.sha, REVISIONS.c.parent_sha, REVISIONS.c.position)
        .select_from(REPOS.outerjoin(REVISIONS, REVISIONS.c.repo_id == REPOS.c.id))
        .where(repo_match(repo))
        .order_by(REVISIONS.c.position, REVISIONS.c.id)
    ).all()
    if not rows:
        return None
    stored = [StoredRevision(r.id, r.sha, r.parent_sha, r.position) for r in rows if r.sha is not None]
    if not stored:
        return []
    for start in (tip or rows[0].head_sha, stored[-1].sha):
        line = lineage(stored, start) if start is not None else None
        if line is not None:
            return list(line.shas)
    return []  # unreachable: the newest stored revision always has a lineage
