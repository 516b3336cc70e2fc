"""Helpers the routers share: query filters and looking up a repo's watch state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import Query

from hubwatch.feeds.errors import ApiError, bad_request, not_found
from hubwatch.domain.records import InvalidRepoId, Kind, RepoId, RepoType, Severity

if TYPE_CHECKING:
    from hubwatch.storage import RepoState, Store

__all__ = [
    "AfterQuery",
    "MAX_PAGE",
    "PageQuery",
    "not_watched",
    "parse_after",
    "parse_cursor",
    "parse_kinds",
    "parse_severity",
    "parse_type",
    "repo_state",
    "require_known",
]

# The highest `?page=` any listing answers: its offset stays far inside a 64-bit integer (SQLite
# raises OverflowError past one, PostgreSQL "bigint out of range"); beyond it is a 400, not a 500.
MAX_PAGE = 1_000_000
PageQuery = Annotated[int, Query(ge=0, le=MAX_PAGE, description=f"0-based page index, at most {MAX_PAGE}")]
# The watch list's keyset cursor: the last org/name of the page before (see parse_after).
AfterQuery = Annotated[str | None, Query(max_length=200, description="org/name: the page after this repo")]


def parse_cursor(before: str | None) -> tuple[int, int] | None:
    """`?before=POSITION.ID` (the keyset cursor an "older →" link carries) → (position, id)."""
    if before is None:
        return None
    position, dot, revision_id = before.partition(".")
    if not (dot and position.isdigit() and revision_id.isdigit()) or len(before) > 40:
        raise bad_request("before must be POSITION.ID, as the page's \"older →\" link gives it")
    return int(position), int(revision_id)


def parse_after(value: str | None) -> RepoId | None:
    """`?after=org/name` (the keyset cursor a "Next page" link carries) → RepoId; a 400 naming the fault."""
    if value is None or not value.strip():
        return None
    try:
        return RepoId.parse(value.strip())
    except ValueError as exc:
        raise bad_request(f"after {value[:200]!r} is not org/name: use the \"Next page\" link's value") from exc


def parse_kinds(values: list[str]) -> list[Kind] | None:
    """`?kind=a&kind=b` or `?kind=a,b` → kinds; a 400 naming an unknown one."""
    names = [part.strip() for value in values for part in value.split(",") if part.strip()]
    if not names:
        return None
    kinds = []
    for name in names:
        try:
            kinds.append(Kind(name))
        except ValueError as exc:
            allowed = ", ".join(k.value for k in Kind)
            raise bad_request(f"kind {name!r} is not a change kind (one of: {allowed})") from exc
    return kinds


def parse_severity(value: str | None, name: str = "min_severity") -> Severity | None:
    if value is None or value == "":
        return None
    try:
        return Severity(value)
    except ValueError as exc:
        allowed = ", ".join(s.value for s in Severity)
        raise bad_request(f"{name} {value!r} is not a severity (one of: {allowed})") from exc


def parse_type(value: str | None) -> RepoType | None:
    """`?type=model` or `?type=dataset` (also "models"/"datasets") → RepoType; empty: both; a 400
    naming the fault otherwise."""
    if not value:
        return None
    try:
        return RepoType.parse(value.lower())
    except InvalidRepoId as exc:
        raise bad_request(f"type {value[:40]!r} is not a repo type: give type=model or type=dataset") from exc


def repo_state(store: "Store", repo: RepoId) -> "RepoState | None":
    """The repo's RepoState when it is watched, else None (one indexed lookup)."""
    state = store.repo_state(repo)
    return state if state is not None and state.watched else None


def not_watched(repo: RepoId, detail: str = "") -> ApiError:
    """The 404 of a repo this hubwatch does not watch, with the command that watches it (a dataset
    is named `datasets/org/name`: the model of the same `org/name` is another repo)."""
    return not_found(f"{repo} is not watched by this hubwatch{detail}: `hubwatch watch add {repo}` watches it")


def require_known(store: "Store", repo: RepoId) -> None:
    """A 404 unless the repo is watched or has stored revisions."""
    if store.head(repo) is None and repo_state(store, repo) is None:
        raise not_watched(repo)
