"""Reading stored revisions back: history entries, the head, known shas and snapshot files."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from hubwatch.storage.core.blobs import get_blob, get_blobs
from hubwatch.storage.core.lookup import resolve_sha
from hubwatch.domain.records import ChangeRecord, Direction, FileRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.storage.repos.repos import find_repo
from hubwatch.storage.core.summaries import repo_summary
from hubwatch.storage.revisions.estimates import estimate_data, joined
from hubwatch.storage.core.tables import ADVISORIES, CHANGES, ESTIMATE_BODIES, ESTIMATES, FILE_VERSIONS, REPOS, REVISIONS
from hubwatch.storage.core.validate import is_storable
from hubwatch.storage.core.values import EstimatePoint, HistoryEntry
from sqlalchemy.engine import Connection

__all__ = [
    "advisory_ids_of",
    "change_record",
    "changes_of",
    "entries",
    "entries_page",
    "estimate_series",
    "head",
    "known_shas",
    "newer_cursor",
    "revision_count",
    "revision_entry",
    "revision_dates",
    "revision_record",
    "sample_positions",
    "snapshot_files",
    "stored_file",
]


def revision_record(row: Any) -> RevisionRecord:
    return RevisionRecord(
        sha=row.sha,
        parent=row.parent_sha,
        date=row.date,
        title=row.title,
        message=row.message,
        authors=tuple(row.authors or ()),
    )


def change_record(row: Any) -> ChangeRecord:
    return ChangeRecord(
        kind=Kind(row.kind),
        severity=Severity(row.severity),
        path=row.path,
        summary=row.summary,
        detail=row.detail if row.detail is not None else {},
        direction=Direction.parse(row.direction),
    )


def changes_of(conn: Connection, revision_ids: list[int], where: Any = None) -> dict[int, list[ChangeRecord]]:
    out: dict[int, list[ChangeRecord]] = defaultdict(list)
    if not revision_ids:
        return out
    query = sa.select(CHANGES).where(CHANGES.c.revision_id.in_(revision_ids))
    if where is not None:
        query = query.where(where)
    for r in conn.execute(query.order_by(CHANGES.c.revision_id, CHANGES.c.ordinal)):
        out[r.revision_id].append(change_record(r))
    return out


def advisory_ids_of(conn: Connection, revision_ids: list[int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = defaultdict(list)
    if revision_ids:
        rows = conn.execute(
            sa.select(ADVISORIES.c.revision_id, ADVISORIES.c.id)
            .where(ADVISORIES.c.revision_id.in_(revision_ids))
            .order_by(ADVISORIES.c.id)
        )
        for r in rows:
            out[r.revision_id].append(r.id)
    return out


def _estimates_of(conn: Connection, revision_ids: list[int]) -> dict[int, tuple[str, dict[str, Any]]]:
    """The newest estimate of each revision (latest created, then latest stored)."""
    out: dict[int, tuple[str, dict[str, Any]]] = {}
    if revision_ids:
        rows = conn.execute(
            sa.select(ESTIMATES.c.revision_id, ESTIMATES.c.estimator_version, ESTIMATE_BODIES.c.data,
                      ESTIMATES.c.revision_json)
            .select_from(joined())
            .where(ESTIMATES.c.revision_id.in_(revision_ids))
            .order_by(ESTIMATES.c.created_at, ESTIMATES.c.id)
        )
        for r in rows:
            out[r.revision_id] = (r.estimator_version, estimate_data(r.data, r.revision_json))
    return out


def entries(conn: Connection, repo: RepoId, *, sha: str | None = None) -> list[HistoryEntry]:
    """History entries of `repo`, oldest first (or only the one revision `sha`)."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return []
    query = sa.select(REVISIONS).where(REVISIONS.c.repo_id == repo_id)
    if sha is not None:
        query = query.where(REVISIONS.c.sha == sha)
    return _entries_of(conn, repo, conn.execute(query.order_by(REVISIONS.c.position, REVISIONS.c.id)).all())


def entries_page(
    conn: Connection, repo: RepoId, *, before: tuple[int, int] | None, limit: int
) -> tuple[list[HistoryEntry], tuple[int, int] | None]:
    """Up to `limit` history entries of `repo`, newest first (by position, then storage order),
    older than the keyset cursor `before` (position, revision id); and the cursor of the next
    page (None: this is the last). Four indexed queries, however deep the history."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return [], None
    query = sa.select(REVISIONS).where(REVISIONS.c.repo_id == repo_id)
    if before is not None:
        position, revision_id = before
        query = query.where(
            sa.or_(
                REVISIONS.c.position < position,
                sa.and_(REVISIONS.c.position == position, REVISIONS.c.id < revision_id),
            )
        )
    order = (REVISIONS.c.position.desc(), REVISIONS.c.id.desc())
    rows = conn.execute(query.order_by(*order).limit(limit + 1)).all()
    shown = rows[:limit]
    cursor = (shown[-1].position, shown[-1].id) if len(rows) > limit else None
    return _entries_of(conn, repo, shown), cursor


def estimate_series(conn: Connection, repo: RepoId, points: int | None = None) -> list[EstimatePoint]:
    """The stored revisions of `repo`, oldest first (by position, then storage order), with their
    newest estimate's JSON: one indexed query over revisions and estimates only (no changes, files
    or advisories). With `points`, at most about that many revisions spread evenly over the whole
    history (the first and the newest position always among them): a chart's series whose size
    does not grow with depth."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return []
    query = (
        sa.select(REVISIONS.c.id, REVISIONS.c.position, REVISIONS.c.sha, REVISIONS.c.date, ESTIMATE_BODIES.c.data,
                  ESTIMATES.c.revision_json)
        .select_from(REVISIONS.outerjoin(joined(), ESTIMATES.c.revision_id == REVISIONS.c.id))
        .where(REVISIONS.c.repo_id == repo_id)
        # the newest estimate of a revision comes last (as _estimates_of picks it)
        .order_by(REVISIONS.c.position, REVISIONS.c.id, ESTIMATES.c.created_at, ESTIMATES.c.id)
    )
    if points is not None:
        top = conn.execute(
            sa.select(sa.func.max(REVISIONS.c.position)).where(REVISIONS.c.repo_id == repo_id)
        ).scalar_one_or_none()
        if top is not None and int(top) + 1 > points:
            query = query.where(REVISIONS.c.position.in_(sample_positions(int(top), points)))
    series: dict[int, EstimatePoint] = {}
    for r in conn.execute(query):
        data = None if r.data is None else estimate_data(r.data, r.revision_json)
        series[r.id] = EstimatePoint(r.position, r.sha, r.date, data)
    return list(series.values())


def sample_positions(top: int, points: int) -> list[int]:
    """At most `points` (≥ 2) positions spread evenly over 0..`top`, both ends included."""
    points = max(2, points)
    return sorted({round(k * top / (points - 1)) for k in range(points)})


def newer_cursor(
    conn: Connection, repo: RepoId, before: tuple[int, int], limit: int
) -> tuple[bool, tuple[int, int] | None]:
    """The "newer" link of the page shown with the keyset cursor `before` (position, revision id):
    that page holds the entries older than `before`, so the page just newer holds the `limit`
    entries from `before` (included) upward. (False, None) when there is none; (True, None) when
    it is the newest page (no cursor); (True, cursor) otherwise, the `before` cursor that shows it.
    One indexed query of at most `limit` + 1 keys."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return False, None
    position, revision_id = before
    rows = conn.execute(
        sa.select(REVISIONS.c.position, REVISIONS.c.id)
        .where(
            REVISIONS.c.repo_id == repo_id,
            sa.or_(
                REVISIONS.c.position > position,
                sa.and_(REVISIONS.c.position == position, REVISIONS.c.id >= revision_id),
            ),
        )
        .order_by(REVISIONS.c.position, REVISIONS.c.id)
        .limit(limit + 1)
    ).all()
    if not rows:
        return False, None
    if len(rows) <= limit:
        return True, None
    return True, (int(rows[limit].position), int(rows[limit].id))


def revision_count(conn: Connection, repo: RepoId) -> int:
    """How many revisions of `repo` are stored (the summary kept at write time: one row read)."""
    summary = repo_summary(conn, repo)
    return 0 if summary is None else summary.revisions


def _entries_of(conn: Connection, repo: RepoId, rows: Sequence[Any]) -> list[HistoryEntry]:
    ids = [r.id for r in rows]
    changes = changes_of(conn, ids)
    estimates = _estimates_of(conn, ids)
    advisories = advisory_ids_of(conn, ids)
    out = []
    for r in rows:
        version, data = estimates.get(r.id, (None, None))
        out.append(
            HistoryEntry(
                revision=revision_record(r),
                position=r.position,
                changes=changes.get(r.id, []),
                estimate=data,
                estimator_version=version,
                advisory_ids=advisories.get(r.id, []),
                repo=repo,
            )
        )
    return out


def revision_entry(conn: Connection, repo: RepoId, sha: str) -> HistoryEntry | None:
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return None
    full = resolve_sha(conn, repo_id, sha)
    if full is None:
        return None
    found = entries(conn, repo, sha=full)
    return found[0] if found else None


def revision_dates(conn: Connection, repo: RepoId, shas: Sequence[str]) -> dict[str, datetime]:
    """The commit dates of those of `shas` (full shas) the repo stores: one query per 500 shas."""
    repo_id = find_repo(conn, repo)
    wanted = sorted(set(shas))
    out: dict[str, datetime] = {}
    for start in range(0, len(wanted) if repo_id is not None else 0, 500):
        rows = conn.execute(
            sa.select(REVISIONS.c.sha, REVISIONS.c.date).where(
                REVISIONS.c.repo_id == repo_id, REVISIONS.c.sha.in_(wanted[start : start + 500])
            )
        )
        out.update({r.sha: r.date for r in rows})
    return out


def known_shas(conn: Connection, repo: RepoId) -> set[str]:
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return set()
    return set(conn.execute(sa.select(REVISIONS.c.sha).where(REVISIONS.c.repo_id == repo_id)).scalars())


def ordered_shas(conn: Connection, repo: RepoId) -> list[str]:
    """Every stored revision's sha, in `entries` order (position, then arrival), nothing else read."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return []
    query = sa.select(REVISIONS.c.sha).where(REVISIONS.c.repo_id == repo_id)
    return list(conn.execute(query.order_by(REVISIONS.c.position, REVISIONS.c.id)).scalars())


def stored_among(conn: Connection, repo: RepoId, shas: Iterable[str]) -> set[str]:
    """Which of `shas` the store holds for `repo`: indexed lookups of those alone (a few hundred a
    statement), however long the repo's history."""
    wanted = sorted({s for s in shas if isinstance(s, str) and is_storable(s)})
    repo_id = find_repo(conn, repo) if wanted else None
    if repo_id is None:
        return set()
    found: set[str] = set()
    for start in range(0, len(wanted), _AMONG_CHUNK):
        chunk = wanted[start:start + _AMONG_CHUNK]
        found.update(conn.execute(
            sa.select(REVISIONS.c.sha).where(REVISIONS.c.repo_id == repo_id, REVISIONS.c.sha.in_(chunk))
        ).scalars())
    return found


_AMONG_CHUNK = 500


def head(conn: Connection, repo: RepoId) -> RevisionRecord | None:
    """The upstream head as last stored: the last revision stored (revisions arrive oldest first,
    and after a force-push the new branch is stored after the abandoned one), or the older stored
    revision a force-push that only removed commits went back to (the repo's recorded head)."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return None
    # Two indexed lookups, not a sort of every stored revision: the recorded head by (repo, sha),
    # else the revision stored last.
    recorded = conn.execute(sa.select(REPOS.c.head_sha).where(REPOS.c.id == repo_id)).scalar_one_or_none()
    row = None
    if recorded is not None:
        row = conn.execute(
            sa.select(REVISIONS).where(REVISIONS.c.repo_id == repo_id, REVISIONS.c.sha == recorded)
        ).first()
    if row is None:
        row = conn.execute(
            sa.select(REVISIONS).where(REVISIONS.c.repo_id == repo_id).order_by(REVISIONS.c.id.desc()).limit(1)
        ).first()
    return None if row is None else revision_record(row)


def snapshot_files(conn: Connection, repo: RepoId, sha: str) -> tuple[list[FileRecord], dict[str, bytes]]:
    """The stored listing of a revision and the decompressed contents of its tracked files.

    An unknown repo or revision gives an empty listing.
    """
    repo_id = find_repo(conn, repo)
    full = resolve_sha(conn, repo_id, sha) if repo_id is not None else None
    if full is None:
        return [], {}
    rows = conn.execute(
        sa.select(FILE_VERSIONS)
        .join(REVISIONS, REVISIONS.c.id == FILE_VERSIONS.c.revision_id)
        .where(REVISIONS.c.repo_id == repo_id, REVISIONS.c.sha == full)
        .order_by(FILE_VERSIONS.c.path)
    ).all()
    files = [
        FileRecord(
            path=r.path, size=r.size, blob_id=r.blob_id, lfs_sha256=r.lfs_sha256, content_sha256=r.content_sha256
        )
        for r in rows
    ]
    blobs = get_blobs(conn, [r.content_sha256 for r in rows if r.content_sha256])
    return files, {r.path: blobs[r.content_sha256] for r in rows if r.content_sha256 in blobs}


def stored_file(conn: Connection, repo: RepoId, sha: str, path: str) -> bytes | None:
    """The decompressed content of one tracked file (`README.md`) of the stored revision with the
    full commit `sha`; None when the repo, the revision or the file's content is not stored. Reads
    that file alone, not the revision's other files."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return None
    content = conn.execute(
        sa.select(FILE_VERSIONS.c.content_sha256)
        .join(REVISIONS, REVISIONS.c.id == FILE_VERSIONS.c.revision_id)
        .where(REVISIONS.c.repo_id == repo_id, REVISIONS.c.sha == sha, FILE_VERSIONS.c.path == path)
    ).scalar_one_or_none()
    return get_blob(conn, content) if content else None
