"""Per-repo summaries kept up to date at write time (`repos.revision_count`, `repos.history_version`).

Every write that stores a revision or an estimate, upserts an advisory, moves the head or renames a
repo raises the repo's `history_version` in the same transaction, so a reader can key whatever it derives from the
whole history (the standing at the head, say) by (repo, version) and recompute it only when the
version moved; `revision_count` is one more with every stored revision. Reading a summary is one
primary-key lookup, however deep the history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import sqlalchemy as sa
from hubwatch.domain.records import RepoId
from hubwatch.storage.repos.repos import repo_match
from hubwatch.storage.core.tables import REPOS
from sqlalchemy.engine import Connection

__all__ = ["RepoSummary", "bump_versions", "repo_summary"]


@dataclass(frozen=True)
class RepoSummary:
    """What pages show of a repo's stored history without reading it."""

    repo_id: int
    revisions: int  # stored revisions
    version: int  # raised by every write that changes the history or the advisories
    head_sha: str | None


def bump_versions(conn: Connection, repo_ids: Iterable[int]) -> None:
    """Raise the history version of the repos `repo_ids` (one statement)."""
    ids = sorted(set(repo_ids))
    if ids:
        conn.execute(
            sa.update(REPOS).where(REPOS.c.id.in_(ids)).values(history_version=REPOS.c.history_version + 1)
        )


def repo_summary(conn: Connection, repo: RepoId) -> RepoSummary | None:
    """The summary of `repo` (any spelling); None when the store has never seen it."""
    row = conn.execute(
        sa.select(REPOS.c.id, REPOS.c.revision_count, REPOS.c.history_version, REPOS.c.head_sha).where(
            repo_match(repo)
        )
    ).first()
    if row is None:
        return None
    return RepoSummary(int(row.id), int(row.revision_count), int(row.history_version), row.head_sha)
