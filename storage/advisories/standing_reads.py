"""The reads a pin's standing makes, bound to one connection (`hubwatch.advisories.pin_standing`).

Storage answers the queries (the repo, a sha prefix, the events index's pin points, the main
line, the advisories) and keeps what is made of them per history version (`storage.versioned`);
the standing itself is made in the advisories room.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from hubwatch.domain.pinpoints import PinPoints
from hubwatch.domain.records import AdvisoryRecord, RepoId
from hubwatch.storage.advisories.advisories import list_advisories
from hubwatch.storage.core.lookup import resolve_sha, revision_shas
from hubwatch.storage.advisories.pinpoints import pin_points
from hubwatch.storage.repos.repos import find_repo
from hubwatch.storage.core.summaries import repo_summary
from hubwatch.storage.core.versioned import RECORD_UNITS, per_version
from sqlalchemy.engine import Connection

__all__ = ["StandingReads"]

T = TypeVar("T")


class StandingReads:
    """`hubwatch.advisories.pin_standing.StandingReads` over one connection (one read transaction)."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def repo_id(self, repo: RepoId) -> int | None:
        return find_repo(self._conn, repo)

    def full_sha(self, repo_id: int, sha: str) -> str | None:
        return resolve_sha(self._conn, repo_id, sha)

    def pin_points(
        self, repo: RepoId, commit: str, open_hazard: Callable[[AdvisoryRecord], bool]
    ) -> PinPoints | None:
        return pin_points(self._conn, repo, commit, open_hazard)

    def head_sha(self, repo: RepoId) -> str | None:
        summary = repo_summary(self._conn, repo)
        return summary.head_sha if summary is not None else None

    def line(self, repo: RepoId, tip: str | None = None) -> list[str] | None:
        return revision_shas(self._conn, repo, tip=tip)

    def advisories(self, repo: RepoId) -> list[AdvisoryRecord]:
        return list_advisories(self._conn, repo, None)

    def per_version(self, repo_id: int, kind: str, build: Callable[[], tuple[T, int]]) -> T:
        return per_version(self._conn, repo_id, kind, build)

    def size_of(self, revisions: int, records: int) -> int:
        return revisions + RECORD_UNITS * records
