"""Advisories: upsert by id (later `modified` wins), listing, and OSV GIT-range queries."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from hubwatch.storage.core.idempotent import insert_of
from hubwatch.storage.core.prepared import Prepared
from hubwatch.storage.core.coltypes import checked_utc
from hubwatch.storage.errors import InvalidRecord
from hubwatch.storage.core.lookup import resolve_sha
from hubwatch.storage.advisories.osvmatch import affecting_ids
from hubwatch.domain.advisory_keys import record_keys
from hubwatch.domain.gitrange import git_events
from hubwatch.domain.records import AdvisoryRecord, RepoId, RepoType
from hubwatch.storage.repos.repos import find_repo, repo_match
from hubwatch.storage.core.summaries import bump_versions
from hubwatch.storage.core.tables import ADVISORIES, ADVISORY_EVENTS, ADVISORY_KEYS, REPOS, REVISIONS
from hubwatch.storage.core.validate import as_prefix, check_json, clean_text, is_storable, prefix_match
from sqlalchemy.engine import Connection

__all__ = [
    "advisories_affecting",
    "advisories_to_plan",
    "advisories_fixed_at",
    "advisories_with_id_suffix",
    "advisories_for_commit",
    "get_advisory",
    "ids_affecting",
    "ids_for_commit",
    "list_advisories",
    "OPEN_MATCH",
    "match_digest",
    "live_count",
    "live_ids",
    "records_by_id",
    "repos_holding",
    "upsert_advisories",
]


def _upsert(dialect: str) -> sa.Insert:
    stmt = insert_of(dialect, ADVISORIES)
    return stmt.on_conflict_do_update(
        index_elements=["id"],
        set_={"osv": stmt.excluded.osv, "modified": stmt.excluded.modified, "withdrawn": stmt.excluded.withdrawn},
        where=ADVISORIES.c.modified <= stmt.excluded.modified,
    ).returning(ADVISORIES.c.id)


# Built once (storage.prepared). The upsert runs as one executemany, which SQLAlchemy sends as one
# multi-row INSERT … RETURNING ("insertmanyvalues"), as the statement built per call was.
_UPSERT = Prepared(_upsert)
_DELETE_EVENTS = Prepared(
    lambda _d: sa.delete(ADVISORY_EVENTS).where(ADVISORY_EVENTS.c.advisory_id.in_(sa.bindparam("ids", expanding=True)))
)
_INSERT_EVENTS = Prepared(lambda _d: sa.insert(ADVISORY_EVENTS))
_DELETE_KEYS = Prepared(
    lambda _d: sa.delete(ADVISORY_KEYS).where(ADVISORY_KEYS.c.advisory_id.in_(sa.bindparam("ids", expanding=True)))
)
_INSERT_KEYS = Prepared(lambda _d: sa.insert(ADVISORY_KEYS))


def _published(record: AdvisoryRecord) -> datetime:
    text = record.osv.get("published")
    if isinstance(text, str):
        try:
            return checked_utc(datetime.fromisoformat(text), f"{record.id} published")
        except ValueError as exc:
            raise InvalidRecord(f"advisory {record.id}: 'published' {text!r} is not an RFC 3339 time") from exc
    return checked_utc(record.modified, f"{record.id} modified")


def upsert_advisories(
    conn: Connection,
    records: Sequence[AdvisoryRecord],
    now: datetime,
    *,
    known: Mapping[tuple[str, str], tuple[int, int]] | None = None,
    bumped: Iterable[int] = (),
) -> None:
    """Insert each record, or update osv/modified/withdrawn of the stored one when not older.

    In a few statements however many records: one repo lookup per repo, one revision lookup per
    repo, one multi-row upsert, one delete and one batched insert of the events of the records it
    wrote, one version bump (storage.summaries) of the repos touched. `known`: (repo key, sha) →
    (repo id, revision id) the caller already holds (no lookup for those); `bumped`: repo ids whose
    version the caller raises in this transaction anyway."""
    seen: set[str] = set()
    for record in records:
        if (
            not isinstance(record.id, str)
            or not record.id.strip()
            or len(record.id) > 200
            or not is_storable(record.id)
        ):
            raise InvalidRecord(
                f"advisory id must be a string of 1 to 200 characters without NUL, got {record.id!r}"
            )
        if record.id in seen:
            raise InvalidRecord(f"advisory {record.id} appears twice in one save")
        seen.add(record.id)
        if not isinstance(record.osv, dict):
            raise InvalidRecord(f"advisory {record.id}: osv must be a JSON object")
        check_json(record.osv, f"advisory {record.id}")
    if not records:
        return
    placed = _place(conn, records, known or {})
    values = []
    for record in records:
        repo_id, revision_id = placed[record.id]
        values.append(
            {
                "id": record.id,
                "repo_id": repo_id,
                "revision_id": revision_id,
                "osv": record.osv,
                "published": _published(record),
                "modified": checked_utc(record.modified, f"advisory {record.id} modified"),
                "withdrawn": checked_utc(record.withdrawn, f"advisory {record.id} withdrawn")
                if record.withdrawn
                else None,
            }
        )
    # Rows back only for the records written: a stored record that is newer is kept (OSV: the
    # later `modified` wins), with its events.
    written = set(conn.execute(_UPSERT(conn), values).scalars())
    if not written:
        return
    conn.execute(_DELETE_EVENTS(conn), {"ids": sorted(written)})
    events = {record.id: git_events(record.osv) for record in records if record.id in written}
    rows = [
        {
            "advisory_id": advisory_id,
            "range_index": e.range_index,
            "ordinal": e.ordinal,
            "event": e.event,
            "value": clean_text(e.value),  # the osv JSON keeps the original text
            "range_repo": clean_text(e.range_repo) if e.range_repo is not None else None,
        }
        for advisory_id, listed in events.items()
        for e in listed
    ]
    if rows:
        conn.execute(_INSERT_EVENTS(conn), rows)
    opened = {i for i, listed in events.items() if not any(e.event == "fixed" for e in listed)}
    _index_keys(conn, [r for r in records if r.id in written], placed, opened)
    bump_versions(conn, {placed[i][0] for i in written} - set(bumped))


def match_digest(file: str, key: str | None) -> str:
    """How `advisory_keys` holds a (file, key) pair: a fixed-size digest, whatever the remote names
    (a key of any length or text stays within every backend's index limits)."""
    return hashlib.sha256(json.dumps([file, key]).encode()).hexdigest()


# The row every record without a `fixed` event holds besides its pairs: the open records are found
# through the same index. (Pairs hash a JSON array; this text is none, so no pair digest equals it.)
OPEN_MATCH = hashlib.sha256(b"open: no fixed event").hexdigest()


def _index_keys(
    conn: Connection, records: Sequence[AdvisoryRecord], placed: Mapping[str, tuple[int, int]], opened: set[str]
) -> None:
    """The (file, key) pairs each of `records` names (`record_keys`), and `OPEN_MATCH` for those in
    `opened` (the ids without a `fixed` event), in place of those indexed before."""
    conn.execute(_DELETE_KEYS(conn), {"ids": sorted(r.id for r in records)})
    rows = [
        {"advisory_id": record.id, "repo_id": placed[record.id][0], "match": match}
        for record in records
        for match in sorted({match_digest(f, k) for f, k in record_keys(record.osv)}
                            | ({OPEN_MATCH} if record.id in opened else set()))
    ]
    if rows:
        conn.execute(_INSERT_KEYS(conn), rows)


def _place(
    conn: Connection, records: Sequence[AdvisoryRecord], known: Mapping[tuple[str, str], tuple[int, int]]
) -> dict[str, tuple[int, int]]:
    """The (repo id, revision id) each record is raised at: `known`, else one lookup per repo for
    the repo and one for its revisions. Raises InvalidRecord for a record whose revision is not stored."""
    by_repo: dict[RepoId, list[AdvisoryRecord]] = {}
    out: dict[str, tuple[int, int]] = {}
    for record in records:
        held = known.get((record.repo.key, record.revision_sha))
        if held is not None:
            out[record.id] = held
        else:
            by_repo.setdefault(record.repo, []).append(record)
    for repo, group in by_repo.items():
        repo_id = find_repo(conn, repo)
        ids: dict[str, int] = {}
        if repo_id is not None:
            shas = sorted({r.revision_sha for r in group})
            found = conn.execute(
                sa.select(REVISIONS.c.sha, REVISIONS.c.id).where(
                    REVISIONS.c.repo_id == repo_id, REVISIONS.c.sha.in_(shas)
                )
            )
            ids = {row.sha: int(row.id) for row in found}
        for record in group:
            if repo_id is None or record.revision_sha not in ids:
                raise InvalidRecord(
                    f"advisory {record.id} is raised for {record.repo}@{record.revision_sha}, which is not stored"
                )
            out[record.id] = (repo_id, ids[record.revision_sha])
    return out


def _select() -> sa.Select[Any]:
    return (
        sa.select(
            ADVISORIES.c.id,
            REPOS.c.org,
            REPOS.c.name,
            REPOS.c.repo_type,
            REVISIONS.c.sha,
            ADVISORIES.c.osv,
            ADVISORIES.c.modified,
            ADVISORIES.c.withdrawn,
        )
        .select_from(
            ADVISORIES.join(REPOS, REPOS.c.id == ADVISORIES.c.repo_id).join(
                REVISIONS, REVISIONS.c.id == ADVISORIES.c.revision_id
            )
        )
        .order_by(ADVISORIES.c.published, ADVISORIES.c.id)
    )


def _record(row: Any) -> AdvisoryRecord:
    return AdvisoryRecord(
        id=row.id,
        repo=RepoId(row.org, row.name, RepoType(row.repo_type)),
        revision_sha=row.sha,
        osv=row.osv,
        modified=row.modified,
        withdrawn=row.withdrawn,
    )


def list_advisories(conn: Connection, repo: RepoId | None = None, newest: int | None = None) -> list[AdvisoryRecord]:
    """The advisories (of `repo`, or all), by published time then id; with `newest`, only the last
    `newest` of them (read newest first, `LIMIT`ed, only those decoded)."""
    query = _select()
    if repo is not None:
        query = query.where(repo_match(repo))
    if newest is None:
        return [_record(r) for r in conn.execute(query)]
    last = query.order_by(None).order_by(ADVISORIES.c.published.desc(), ADVISORIES.c.id.desc()).limit(newest)
    return [_record(r) for r in conn.execute(last)][::-1]


def advisories_to_plan(
    conn: Connection, repo: RepoId, pairs: Iterable[tuple[str, str | None]], open_ones: bool = True
) -> list[AdvisoryRecord]:
    """The repo's live records that a revision whose changes name the (file, key) `pairs`
    (`advise_match.change_keys`) may close or undo, by published time then id: every record
    without a `fixed` event (the open hazards, and records of other shapes) and those sharing a
    pair (`advisory_keys`). Only these are decoded: what a revision is planned against no longer
    grows with the repo's history, only with what is open and what its files went through.
    Without `open_ones`, only those sharing a pair. The open ones are those indexed `OPEN_MATCH`."""
    digests = sorted({match_digest(file, key) for file, key in pairs} | ({OPEN_MATCH} if open_ones else set()))
    repo_id = find_repo(conn, repo) if digests else None
    if repo_id is None:
        return []
    # Through the (repo, match, advisory) index: the rows of the digests asked, each record once.
    wanted = sa.select(ADVISORY_KEYS.c.advisory_id).where(
        ADVISORY_KEYS.c.repo_id == repo_id, ADVISORY_KEYS.c.match.in_(digests)
    )
    live = ADVISORIES.c.withdrawn.is_(None)
    return [_record(r) for r in conn.execute(_select().where(ADVISORIES.c.id.in_(wanted), live))]


def get_advisory(conn: Connection, advisory_id: str) -> AdvisoryRecord | None:
    if not isinstance(advisory_id, str) or not is_storable(advisory_id):
        return None  # no stored id holds NUL (PostgreSQL would refuse the query)
    row = conn.execute(_select().where(ADVISORIES.c.id == advisory_id)).first()
    return None if row is None else _record(row)


def records_by_id(conn: Connection, ids: Sequence[str]) -> list[AdvisoryRecord]:
    """The stored records of `ids` (those that exist), by published time then id; only these are decoded."""
    if not ids:
        return []
    return [_record(r) for r in conn.execute(_select().where(ADVISORIES.c.id.in_(list(ids))))]


def live_ids(conn: Connection, repo: RepoId) -> list[str]:
    """The ids (sorted) of the repo's advisories that are not withdrawn; no record decoded."""
    query = (
        sa.select(ADVISORIES.c.id)
        .select_from(ADVISORIES.join(REPOS, REPOS.c.id == ADVISORIES.c.repo_id))
        .where(repo_match(repo), ADVISORIES.c.withdrawn.is_(None))
        .order_by(ADVISORIES.c.id)
    )
    return list(conn.execute(query).scalars())


def live_count(conn: Connection, repo: RepoId) -> int:
    """How many of the repo's advisories are not withdrawn (counted in the database)."""
    query = (
        sa.select(sa.func.count())
        .select_from(ADVISORIES.join(REPOS, REPOS.c.id == ADVISORIES.c.repo_id))
        .where(repo_match(repo), ADVISORIES.c.withdrawn.is_(None))
    )
    return int(conn.execute(query).scalar_one())


def _affecting_ids(conn: Connection, repo_id: int, sha: str) -> list[str]:
    full = resolve_sha(conn, repo_id, sha)
    return [] if full is None else affecting_ids(conn, repo_id, full)


def ids_affecting(conn: Connection, repo: RepoId, sha: str) -> list[str]:
    """The ids (sorted) of `advisories_affecting(repo, sha)`, read from the events index alone."""
    repo_id = find_repo(conn, repo)
    return [] if repo_id is None else _affecting_ids(conn, repo_id, sha)


def advisories_affecting(conn: Connection, repo: RepoId, sha: str) -> list[AdvisoryRecord]:
    """Advisories (not withdrawn) whose GIT ranges include `sha` in the repo's stored history."""
    return records_by_id(conn, ids_affecting(conn, repo, sha))


def ids_for_commit(conn: Connection, sha: str) -> list[tuple[RepoId, str]]:
    """`advisories_for_commit` as (repo, advisory id) pairs: no record decoded."""
    prefix = as_prefix(sha)
    out: list[tuple[RepoId, str]] = []
    for repo_id, repo in _holders(conn, sha):
        out.extend((repo, advisory_id) for advisory_id in _affecting_ids(conn, repo_id, prefix or sha))
    return out


def advisories_for_commit(conn: Connection, sha: str) -> list[tuple[RepoId, AdvisoryRecord]]:
    """For every repo that holds the commit (full sha or unique prefix), the advisories affecting it."""
    out: list[tuple[RepoId, AdvisoryRecord]] = []
    prefix = as_prefix(sha)
    for repo_id, repo in _holders(conn, sha):
        records = records_by_id(conn, _affecting_ids(conn, repo_id, prefix or sha))
        out.extend((repo, rec) for rec in records)
    return out


def repos_holding(conn: Connection, sha: str) -> list[RepoId]:
    """The repos whose stored revisions hold the commit (full sha or prefix), by org/name."""
    return [repo for _id, repo in _holders(conn, sha)]


def _holders(conn: Connection, sha: str) -> list[tuple[int, RepoId]]:
    prefix = as_prefix(sha)
    if prefix is None:
        return []
    cond = prefix_match(REVISIONS.c.sha, prefix)
    holders = conn.execute(
        sa.select(REPOS.c.id, REPOS.c.org, REPOS.c.name, REPOS.c.repo_type)
        .distinct()
        .select_from(REVISIONS.join(REPOS, REPOS.c.id == REVISIONS.c.repo_id))
        .where(cond)
        .order_by(REPOS.c.org, REPOS.c.name)
    ).all()
    return [(h.id, RepoId(h.org, h.name, RepoType(h.repo_type))) for h in holders]


def advisories_fixed_at(conn: Connection, repo: RepoId, full_sha: str) -> list[AdvisoryRecord]:
    """The repo's live advisories that name the commit `full_sha` as a `fixed` event (an upstream fix or a
    revert), by published time then id: one indexed query on the events, only these records decoded."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return []
    named = (
        sa.select(ADVISORY_EVENTS.c.advisory_id)
        .where(ADVISORY_EVENTS.c.event == "fixed", ADVISORY_EVENTS.c.value == full_sha)
        .scalar_subquery()
    )
    query = _select().where(ADVISORIES.c.repo_id == repo_id, ADVISORIES.c.withdrawn.is_(None), ADVISORIES.c.id.in_(named))
    return [_record(r) for r in conn.execute(query)]


def advisories_with_id_suffix(
    conn: Connection, repo: RepoId, suffix: str, *, withdrawn: bool = False
) -> list[AdvisoryRecord]:
    """The repo's live advisories (with `withdrawn`, the withdrawn ones too) whose id ends with
    `suffix` (`-inherited`, …), by published time then id: the ids are matched in the database, only
    these records decoded."""
    query = _select().where(repo_match(repo), ADVISORIES.c.id.endswith(suffix, autoescape=True))
    if not withdrawn:
        query = query.where(ADVISORIES.c.withdrawn.is_(None))
    return [_record(r) for r in conn.execute(query)]
