"""Finding stored revisions: by full sha or a unique prefix of at least 7 hex characters."""

from __future__ import annotations

import sqlalchemy as sa
from hubwatch.storage.errors import AmbiguousRevision
from hubwatch.storage.osvrange import StoredRevision
from hubwatch.storage.tables import REVISIONS
from hubwatch.storage.validate import as_prefix
from sqlalchemy.engine import Connection

__all__ = ["resolve_sha", "stored_revisions"]


def resolve_sha(conn: Connection, repo_id: int, sha: str) -> str | None:
    """The full sha of the one stored revision of the repo matching `sha`; None when none does
    (also when `sha` is not 7 to 40 hex characters). Raises AmbiguousRevision for a shared prefix."""
    prefix = as_prefix(sha)
    if prefix is None:
        return None
    query = sa.select(REVISIONS.c.sha).where(REVISIONS.c.repo_id == repo_id)
    if len(prefix) == 40:
        query = query.where(REVISIONS.c.sha == prefix)
    else:
        # Hex only (checked above), so no LIKE wildcard can be smuggled in.
        query = query.where(REVISIONS.c.sha.like(prefix + "%"))
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
