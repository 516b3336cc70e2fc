"""Tracked repos: watch / unwatch, the watch list with poll state, and recording poll outcomes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from hubwatch.storage.core.idempotent import dialect_insert
from hubwatch.storage.core.coltypes import checked_utc
from hubwatch.storage.core.prepared import Prepared
from hubwatch.storage.errors import InvalidRecord
from hubwatch.domain.records import PollState, RepoId, RepoType
from hubwatch.storage.core.tables import POLL_RUNS, REPO_ALIASES, REPOS, REVISIONS
from hubwatch.storage.core.validate import clean_text
from hubwatch.storage.core.values import RepoState
from sqlalchemy.engine import Connection

__all__ = [
    "canonical_id",
    "ensure_repo",
    "find_repo",
    "find_revision",
    "first_id",
    "in_scope",
    "mark_due",
    "record_poll",
    "repo_match",
    "repo_states",
    "repos_match",
    "set_watched",
    "watched_among",
    "watched_ids",
    "watched_types",
]

# Repos per IN-list: well under SQLite's and PostgreSQL's bound-parameter limits (2 per repo).
BATCH = 500
_MAX_INT64 = 2**63 - 1  # past it SQLite raises OverflowError, PostgreSQL "bigint out of range"


def _check_repo(repo: RepoId) -> RepoId:
    if not isinstance(repo, RepoId):
        raise InvalidRecord(f"expected a RepoId, got {type(repo).__name__}: {repo!r} (use RepoId.parse)")
    return repo


def repo_match(repo: RepoId) -> sa.ColumnElement[bool]:
    """The condition on `repos` rows for `repo`, spelled in any case, under its id or an id it had
    before a rename (an alias): the unique `key`, or the one alias row with that key."""
    key = _check_repo(repo).key
    alias = sa.select(REPO_ALIASES.c.repo_id).where(REPO_ALIASES.c.key == key).scalar_subquery()
    return sa.or_(REPOS.c.key == key, REPOS.c.id == alias)


def repos_match(repos: Iterable[RepoId]) -> sa.ColumnElement[bool]:
    """`repo_match` for several repos in one condition (IN-lists on the two unique keys)."""
    keys = sorted({_check_repo(r).key for r in repos})
    if not keys:
        return sa.false()
    aliased = sa.select(REPO_ALIASES.c.repo_id).where(REPO_ALIASES.c.key.in_(keys))
    return sa.or_(REPOS.c.key.in_(keys), REPOS.c.id.in_(aliased))


def in_scope(repo: RepoId | None = None, org: str | None = None) -> sa.ColumnElement[bool]:
    """The condition on `repos` rows for one repo and/or one org (true when neither is given)."""
    condition: sa.ColumnElement[bool] = sa.true()
    if repo is not None:
        condition = sa.and_(condition, repo_match(repo))
    if org is not None:  # ids match case-insensitively, the org of one as well (`RepoId.key`)
        condition = sa.and_(condition, sa.func.lower(REPOS.c.org) == org.lower())
    return condition


# Built once (storage.prepared): the lookup almost every write starts with.
_BY_KEY = Prepared(lambda _d: sa.select(REPOS.c.id).where(REPOS.c.key == sa.bindparam("key")))
_BY_ALIAS = Prepared(lambda _d: sa.select(REPO_ALIASES.c.repo_id).where(REPO_ALIASES.c.key == sa.bindparam("key")))


def find_repo(conn: Connection, repo: RepoId) -> int | None:
    """The row id of `repo` (any spelling, or an id it had before a rename), or None."""
    key = {"key": _check_repo(repo).key}
    found = conn.execute(_BY_KEY(conn), key).scalar_one_or_none()
    if found is None:
        found = conn.execute(_BY_ALIAS(conn), key).scalar_one_or_none()
    return found


def canonical_id(conn: Connection, repo: RepoId) -> RepoId | None:
    """The id of `repo`'s row as the store spells it (the hub's spelling, the newest name after
    a rename), found by any spelling or alias; None when the store does not know the repo."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return None
    row = conn.execute(sa.select(REPOS.c.org, REPOS.c.name, REPOS.c.repo_type).where(REPOS.c.id == repo_id)).one()
    return RepoId(row.org, row.name, RepoType(row.repo_type))


def first_id(conn: Connection, repo: RepoId) -> RepoId | None:
    """The id the store first knew `repo` by (advisory and feed ids derive from it, so they
    survive renames); None when the store does not know the repo."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return None
    row = conn.execute(sa.select(REPOS.c.first_id, REPOS.c.org, REPOS.c.name, REPOS.c.repo_type).where(REPOS.c.id == repo_id)
    ).one()
    return RepoId.parse(row.first_id) if row.first_id else RepoId(row.org, row.name, RepoType(row.repo_type))


def find_revision(conn: Connection, repo: RepoId, sha: str) -> int | None:
    """The row id of `repo`'s stored revision with the full commit `sha`, or None."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return None
    return conn.execute(
        sa.select(REVISIONS.c.id).where(REVISIONS.c.repo_id == repo_id, REVISIONS.c.sha == sha)
    ).scalar_one_or_none()


def ensure_repo(conn: Connection, repo: RepoId, now: datetime, *, watched: bool = False) -> int:
    """The id of `repo`'s row, creating it (not watched unless asked) when missing; race-safe."""
    found = find_repo(conn, repo)
    if found is not None:
        return found
    conn.execute(
        dialect_insert(conn, REPOS)
        .values(
            repo_type=repo.repo_type.value,
            org=repo.org,
            name=repo.name,
            key=repo.key,
            first_id=str(repo),
            watched=watched,
            state=PollState.NEW.value,
            failures=0,
            created_at=now,
        )
        .on_conflict_do_nothing(index_elements=["key"])
    )
    found = find_repo(conn, repo)
    assert found is not None
    return found


def set_watched(conn: Connection, repo: RepoId, watched: bool, now: datetime) -> bool:
    """Turn watching on or off; True when that changed anything (history is kept either way)."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        if not watched:
            return False
        ensure_repo(conn, repo, now, watched=True)
        return True
    result = conn.execute(
        sa.update(REPOS).where(REPOS.c.id == repo_id, REPOS.c.watched != watched).values(watched=watched)
    )
    return bool(result.rowcount)


def repo_states(
    conn: Connection,
    *,
    watched_only: bool = True,
    repo: RepoId | None = None,
    org: str | None = None,
    offset: int = 0,
    limit: int | None = None,
    where: sa.ColumnElement[bool] | None = None,
    after: RepoId | None = None,
    repo_type: RepoType | None = None,
) -> list[RepoState]:
    """Repos ordered by org/name with their revision counts; optionally one repo or one org's, one
    type's, or those meeting `where` (a condition on `repos`: the index's filters), `limit` of them after the
    keyset cursor `after` (the last repo of the page before: read through the (org, name, repo_type)
    index, however deep in the watch list) or from `offset`."""
    if not 0 <= offset <= _MAX_INT64 or (limit is not None and not 0 <= limit <= _MAX_INT64):
        raise InvalidRecord(f"offset and limit must be 0 … 2**63-1, got offset={offset}, limit={limit}")
    # revision_count: kept at write time; (org, name, repo_type) is the unique index's order
    query = sa.select(REPOS).order_by(REPOS.c.org, REPOS.c.name, REPOS.c.repo_type)
    query = query.where(in_scope(repo, org))
    if after is not None:
        query = query.where(sa.tuple_(REPOS.c.org, REPOS.c.name, REPOS.c.repo_type)
                            > sa.tuple_(after.org, after.name, after.repo_type.value))  # fmt: skip
    if where is not None:
        query = query.where(where)
    if repo_type is not None:
        query = query.where(REPOS.c.repo_type == repo_type.value)
    if watched_only:
        query = query.where(REPOS.c.watched.is_(True))
    if limit is not None:
        query = query.limit(limit)
    if offset:
        query = query.offset(offset)
    return [_state(r) for r in conn.execute(query)]


def _state(r: sa.Row[Any]) -> RepoState:
    return RepoState(
        repo=RepoId(r.org, r.name, RepoType(r.repo_type)),
        state=PollState(r.state),
        last_error=r.last_error,
        head_sha=r.head_sha,
        last_polled_at=r.last_polled_at,
        revision_count=int(r.revision_count),
        next_poll_at=r.next_poll_at,
        failures=r.failures,
        lease_owner=r.lease_owner,
        lease_expires_at=r.lease_expires_at,
        watched=r.watched,
    )


def _batches(repos: Iterable[RepoId]) -> Iterator[list[str]]:
    keys = sorted({_check_repo(r).key for r in repos})
    for start in range(0, len(keys), BATCH):
        yield keys[start : start + BATCH]


def watched_among(conn: Connection, repos: Iterable[RepoId]) -> list[RepoState]:
    """The states of those of `repos` that are watched (ordered by org/name), one query per
    IN-list of up to BATCH repos: the cost follows the ids asked about, not the watch list."""
    found: list[RepoState] = []
    for batch in _batches(repos):
        query = (
            sa.select(REPOS)
            .where(REPOS.c.watched.is_(True), REPOS.c.key.in_(batch))
            .order_by(REPOS.c.org, REPOS.c.name, REPOS.c.repo_type)
        )
        found.extend(_state(r) for r in conn.execute(query))
    return found


def watched_types(conn: Connection) -> set[RepoType]:
    """The repo types at least one watched repo has: one statement of an EXISTS per type, each a
    seek in `ix_repos_type_watched`, so its cost does not grow with the watch list."""
    checks = [
        sa.exists().where(REPOS.c.repo_type == t.value, REPOS.c.watched.is_(True)).label(t.value) for t in RepoType
    ]
    row = conn.execute(sa.select(*checks)).one()
    return {t for t, present in zip(RepoType, row) if present}


def watched_ids(conn: Connection, repos: Iterable[RepoId]) -> dict[RepoId, RepoId]:
    """Which of `repos` name a watched repo, by any spelling or an id it had before a rename: each
    one found → the id as the store spells it. One query per IN-list of up to BATCH ids (a model
    card's `datasets:` list is one): the cost follows the ids asked about, not the watch list."""
    asked = {_check_repo(r).key: r for r in repos}
    found: dict[RepoId, RepoId] = {}
    for batch in _batches(asked.values()):
        alias = REPO_ALIASES.c.key.label("alias")
        query = (
            sa.select(REPOS.c.org, REPOS.c.name, REPOS.c.repo_type, REPOS.c.key, alias)
            .select_from(REPOS.outerjoin(REPO_ALIASES, sa.and_(REPO_ALIASES.c.repo_id == REPOS.c.id,
                                                               REPO_ALIASES.c.key.in_(batch))))
            .where(REPOS.c.watched.is_(True), sa.or_(REPOS.c.key.in_(batch), REPO_ALIASES.c.key.isnot(None)))
        )  # fmt: skip
        for r in conn.execute(query):
            spelled = RepoId(r.org, r.name, RepoType(r.repo_type))
            for key in (r.key, r.alias):
                if key in asked:
                    found[asked[key]] = spelled
    return found


def mark_due(conn: Connection, repos: Iterable[RepoId], now: datetime) -> int:
    """Make those of `repos` that are watched due at `now` (unless due already); how many changed."""
    now = checked_utc(now, "due time")
    changed = 0
    for batch in _batches(repos):
        result = conn.execute(
            sa.update(REPOS)
            .where(
                REPOS.c.watched.is_(True),
                REPOS.c.key.in_(batch),
                sa.or_(REPOS.c.next_poll_at.is_(None), REPOS.c.next_poll_at > now),
            )
            .values(next_poll_at=now)
        )
        changed += int(result.rowcount)
    return changed


def record_poll(
    conn: Connection,
    repo: RepoId,
    state: PollState | str,
    error: str | None,
    at: datetime,
    *,
    started: datetime | None = None,
    new_revisions: int = 0,
) -> None:
    """Record a poll's outcome on the repo (state, error, time, failure count) and as a poll run."""
    try:
        state = PollState.parse(state)
    except ValueError as exc:
        raise InvalidRecord(str(exc)) from exc
    at = checked_utc(at, "poll time")
    started = checked_utc(started, "poll start") if started is not None else at
    repo_id = ensure_repo(conn, repo, at)
    # Gated, missing and disabled repos back off like errors: only a good poll resets the count.
    failures = 0 if state in (PollState.OK, PollState.NEW) else REPOS.c.failures + 1
    error = clean_text(error) if error is not None else None
    conn.execute(
        sa.update(REPOS)
        .where(REPOS.c.id == repo_id)
        .values(state=state.value, last_error=error, last_polled_at=at, failures=failures)
    )
    conn.execute(
        sa.insert(POLL_RUNS).values(
            repo_id=repo_id,
            started_at=started,
            finished_at=at,
            outcome=state.value,
            new_revisions=int(new_revisions),
            error=error,
        )
    )
