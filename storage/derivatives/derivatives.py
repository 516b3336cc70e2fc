"""Derivatives: bases watched with their derivatives, each derivative's base and relation, and
the notes the inheritance check leaves on a derivative (tables, queries and a small facade).

- `family_roots`: a repo watched with `--derivatives` (the relations asked for, the limit, when
  the hub's listing was last read for it).
- `family_members`: a derivative found through the listing: its base (a base watched with its derivatives), the
  relation the hub tags it with, when it was found, and `notes` (per base advisory id: what the
  inheritance check found — `stale`, `matches`, `own` — with a one-line text and the sha checked).

The tables register on SQLModel's metadata when this module is imported (the Alembic
environment imports it; migration `0010_families` creates them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from hubwatch.domain.records import RepoId, RepoType
from hubwatch.storage.core.coltypes import UTCDateTime, checked_utc
from hubwatch.storage.errors import InvalidRecord
from hubwatch.storage.core.idempotent import dialect_insert
from hubwatch.storage.repos.repos import find_repo, set_watched
from hubwatch.storage.core.tables import REPOS
from hubwatch.storage.core.transactions import Transactions
from sqlalchemy.engine import Connection, Engine
from sqlmodel import Field, SQLModel

__all__ = [
    "DERIVATIVE_MEMBERS",
    "DERIVATIVE_ROOTS",
    "RELATIONS",
    "Derivatives",
    "Derivative",
    "DerivativeRow",
    "DerivativesRoot",
    "DerivativesRootRow",
]

RELATIONS = ("finetune", "quantized", "adapter", "merge")


class DerivativesRootRow(SQLModel, table=True):
    """A base watched with its derivatives (`hubwatch watch add ORG/NAME --derivatives`)."""

    __tablename__ = "family_roots"  # pyright: ignore[reportAssignmentType]  # SQLModel declares it declared_attr

    repo_id: int = Field(
        sa_column_args=[sa.ForeignKey("repos.id", ondelete="CASCADE")], primary_key=True, nullable=False
    )
    relations: list[str] = Field(default_factory=list, sa_type=sa.JSON)  # [] = every relation
    max_derivatives: int | None = Field(default=None)
    refreshed_at: datetime | None = Field(default=None, sa_type=UTCDateTime, nullable=True)
    created_at: datetime = Field(sa_type=UTCDateTime)


class DerivativeRow(SQLModel, table=True):
    """A derivative of a base watched with its derivatives: the relation the hub tags it with and the inheritance notes."""

    __tablename__ = "family_members"  # pyright: ignore[reportAssignmentType]
    __table_args__ = (sa.Index("ix_family_members_base", "base_id"),)

    repo_id: int = Field(
        sa_column_args=[sa.ForeignKey("repos.id", ondelete="CASCADE")], primary_key=True, nullable=False
    )
    base_id: int = Field(sa_column_args=[sa.ForeignKey("repos.id", ondelete="CASCADE")], nullable=False)
    relation: str = Field(sa_type=sa.String(16))
    found_at: datetime = Field(sa_type=UTCDateTime)
    notes: dict[str, Any] = Field(default_factory=dict, sa_type=sa.JSON)


DERIVATIVE_ROOTS: sa.Table = DerivativesRootRow.__table__  # type: ignore[attr-defined]
DERIVATIVE_MEMBERS: sa.Table = DerivativeRow.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class DerivativesRoot:
    """A base watched with its derivatives."""

    repo: RepoId
    relations: tuple[str, ...]
    max_derivatives: int | None
    refreshed_at: datetime | None


@dataclass(frozen=True)
class Derivative:
    """A derivative: its base, relation, when found, and the inheritance notes by base advisory id."""

    repo: RepoId
    base: RepoId
    relation: str
    found_at: datetime
    notes: dict[str, Any] = field(default_factory=dict)


def _check_relations(relations: Sequence[str]) -> list[str]:
    bad = [r for r in relations if r not in RELATIONS]
    if bad:
        raise InvalidRecord(f"unknown relation(s) {', '.join(bad)}: use {', '.join(RELATIONS)}")
    return sorted(set(relations), key=RELATIONS.index)


def set_root(conn: Connection, base: RepoId, relations: Sequence[str], limit: int | None, now: datetime) -> None:
    """Watch `base` with its derivatives (the relations and limit replace earlier ones)."""
    if limit is not None and limit < 1:
        raise InvalidRecord(f"the derivative limit must be at least 1, got {limit}")
    chosen = _check_relations(relations)
    set_watched(conn, base, True, now)
    repo_id = find_repo(conn, base)
    stmt = dialect_insert(conn, DERIVATIVE_ROOTS).values(
        repo_id=repo_id, relations=chosen, max_derivatives=limit, created_at=checked_utc(now, "now")
    )
    conn.execute(
        stmt.on_conflict_do_update(
            index_elements=["repo_id"], set_={"relations": chosen, "max_derivatives": limit}
        )
    )


def add_members(conn: Connection, base: RepoId, found: Sequence[tuple[RepoId, str]], now: datetime) -> list[RepoId]:
    """Record each derivative's base and relation, watching those not yet recorded (one removed
    with `watch remove` since stays unwatched); the ones not recorded before."""
    base_id = find_repo(conn, base)
    if base_id is None:
        raise InvalidRecord(f"{base} is not stored: watch it with --derivatives first")
    known = {
        int(r) for r in conn.execute(sa.select(DERIVATIVE_MEMBERS.c.repo_id).where(DERIVATIVE_MEMBERS.c.base_id == base_id)).scalars()
    }
    added: list[RepoId] = []
    for repo, relation in found:
        _check_relations([relation])
        repo_id = find_repo(conn, repo)
        if repo_id == base_id:
            continue
        if repo_id is None or int(repo_id) not in known:
            set_watched(conn, repo, True, now)
            repo_id = find_repo(conn, repo)
        if repo_id is None:
            continue
        stmt = dialect_insert(conn, DERIVATIVE_MEMBERS).values(
            repo_id=repo_id, base_id=base_id, relation=relation, found_at=checked_utc(now, "now"), notes={}
        )
        conn.execute(stmt.on_conflict_do_update(index_elements=["repo_id"], set_={"base_id": base_id, "relation": relation}))
        if repo_id not in known:
            added.append(repo)
    conn.execute(sa.update(DERIVATIVE_ROOTS).where(DERIVATIVE_ROOTS.c.repo_id == base_id).values(refreshed_at=checked_utc(now, "now")))
    return added


def _repo_names(conn: Connection, ids: set[int]) -> dict[int, RepoId]:
    if not ids:
        return {}
    rows = conn.execute(sa.select(REPOS.c.id, REPOS.c.org, REPOS.c.name, REPOS.c.repo_type).where(REPOS.c.id.in_(sorted(ids))))
    return {int(r.id): RepoId(r.org, r.name, RepoType(r.repo_type)) for r in rows}


def roots(conn: Connection) -> list[DerivativesRoot]:
    rows = conn.execute(sa.select(DERIVATIVE_ROOTS)).all()
    names = _repo_names(conn, {int(r.repo_id) for r in rows})
    out = [DerivativesRoot(names[int(r.repo_id)], tuple(r.relations or ()), r.max_derivatives, r.refreshed_at) for r in rows]
    return sorted(out, key=lambda f: str(f.repo).lower())


def members(conn: Connection, base: RepoId | None = None, repo: RepoId | None = None) -> list[Derivative]:
    """Derivatives (of `base`, or `repo` alone), ordered by id."""
    query = sa.select(DERIVATIVE_MEMBERS)
    for value, column in ((base, DERIVATIVE_MEMBERS.c.base_id), (repo, DERIVATIVE_MEMBERS.c.repo_id)):
        if value is not None:
            found = find_repo(conn, value)
            if found is None:
                return []
            query = query.where(column == found)
    rows = conn.execute(query).all()
    names = _repo_names(conn, {int(r.repo_id) for r in rows} | {int(r.base_id) for r in rows})
    out = [
        Derivative(names[int(r.repo_id)], names[int(r.base_id)], r.relation, r.found_at, dict(r.notes or {}))
        for r in rows
    ]
    return sorted(out, key=lambda m: str(m.repo).lower())


def in_derivatives(conn: Connection, repo: RepoId) -> bool:
    """Whether `repo` is a base with a watched derivative, or a derivative of a watched base (two
    indexed lookups, whatever the number of derivatives)."""
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return False
    m = DERIVATIVE_MEMBERS.c
    watched = sa.select(REPOS.c.id).where(REPOS.c.watched.is_(True))
    derivative = sa.select(m.repo_id).where(m.base_id == repo_id, m.repo_id.in_(watched)).limit(1)
    base = sa.select(m.base_id).where(m.repo_id == repo_id, m.base_id.in_(watched)).limit(1)
    return conn.execute(derivative).first() is not None or conn.execute(base).first() is not None


def set_notes(conn: Connection, repo: RepoId, notes: Mapping[str, Any]) -> bool:
    repo_id = find_repo(conn, repo)
    if repo_id is None:
        return False
    result = conn.execute(sa.update(DERIVATIVE_MEMBERS).where(DERIVATIVE_MEMBERS.c.repo_id == repo_id).values(notes=dict(notes)))
    return bool(result.rowcount)


class Derivatives(Transactions):
    """The derivatives queries over a store's engine, each in its own transaction."""

    def __init__(self, engine: Engine, clock: Callable[[], datetime]) -> None:
        self.engine = engine
        self._clock = clock

    def set_root(self, base: RepoId, relations: Sequence[str] = (), limit: int | None = None) -> None:
        now = self._clock()
        self._write(lambda c: set_root(c, base, relations, limit, now))

    def add_members(self, base: RepoId, found: Sequence[tuple[RepoId, str]]) -> list[RepoId]:
        now = self._clock()
        return self._write(lambda c: add_members(c, base, found, now))

    def roots(self) -> list[DerivativesRoot]:
        with self._read() as c:
            return roots(c)

    def members(self, base: RepoId | None = None, repo: RepoId | None = None) -> list[Derivative]:
        with self._read() as c:
            return members(c, base, repo)

    def member(self, repo: RepoId) -> Derivative | None:
        found = self.members(repo=repo)
        return found[0] if found else None

    def in_derivatives(self, repo: RepoId) -> bool:
        """Whether `repo` is a base with a watched derivative or a derivative of a watched base."""
        with self._read() as c:
            return in_derivatives(c, repo)

    def set_notes(self, repo: RepoId, notes: Mapping[str, Any]) -> bool:
        return self._write(lambda c: set_notes(c, repo, notes))
