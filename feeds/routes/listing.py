"""The index of watched repos, models and datasets (all, or one org's): search by name (`?q=`) and
filters by org, repo type (`?type=model|dataset`), change kind, lowest severity and date
(`?since=`), as a plain GET form; a fixed number of queries."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated, Any

from fastapi import Query, Request, Response

from hubwatch.domain.hub_status import TOKEN_KEY, TokenProblem
from hubwatch.domain.records import Kind, RepoId, RepoType, Severity
from hubwatch.domain.times import as_utc
from hubwatch.feeds.context import AppContext, org_from_path
from hubwatch.feeds.errors import bad_request
from hubwatch.feeds.routes.common import parse_kinds, parse_severity, parse_type
from hubwatch.storage.repos.index import IndexFilter
from hubwatch.storage.core.values import FeedItem

__all__ = ["PAGE_SIZE", "index_filter", "listing", "parse_since"]

PAGE_SIZE = 100
MAX_Q = 200


def parse_since(value: str | None) -> datetime | None:
    """`?since=2024-05-01` (a UTC day) or a full RFC 3339 time → datetime; a 400 naming the fault."""
    if not value:
        return None
    try:
        if len(value) == 10:
            return datetime.combine(date.fromisoformat(value), datetime.min.time(), UTC)
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            raise ValueError("no time zone")
        return as_utc(moment)
    except ValueError as exc:
        raise bad_request(f"since {value!r} is not a date: give YYYY-MM-DD or an RFC 3339 time "
                          "(2024-05-01T00:00:00Z)") from exc


def index_filter(
    q: Annotated[str, Query(max_length=MAX_Q, description="part of org/name, any case")] = "",
    org_name: Annotated[str, Query(alias="org", max_length=96, description="one organisation")] = "",
    repo_type: Annotated[str, Query(alias="type", max_length=40, description="model or dataset")] = "",
    kind: Annotated[list[str] | None, Query(description="change kinds (repeat, or comma-separated)")] = None,
    severity: Annotated[str, Query(description="lowest severity of a change")] = "",
    since: Annotated[str, Query(description="changes dated at or after (YYYY-MM-DD)")] = "",
) -> IndexFilter:
    """The index's query string as an IndexFilter (a FastAPI dependency); a 400 for a bad value."""
    return IndexFilter(
        q=q.strip(),
        org=org_from_path(org_name.strip()) if org_name.strip() else None,
        repo_type=parse_type(repo_type.strip()),
        kinds=tuple(parse_kinds(kind or []) or ()),
        min_severity=parse_severity(severity or None, "severity"),
        since=parse_since(since.strip() or None),
    )


def _query_string(f: IndexFilter, after: RepoId | None, with_org: bool) -> str:
    from urllib.parse import urlencode

    pairs: list[tuple[str, str]] = [("q", f.q)] if f.q else []
    if with_org and f.org:
        pairs.append(("org", f.org))
    if f.repo_type is not None:
        pairs.append(("type", f.repo_type.value))
    pairs += [("kind", k.value) for k in f.kinds]
    if f.min_severity is not None:
        pairs.append(("severity", f.min_severity.value))
    if f.since is not None:
        pairs.append(("since", f.since.date().isoformat() if f.since.time() == datetime.min.time() else f.since.isoformat()))
    if after is not None:
        pairs.append(("after", str(after)))
    return urlencode(pairs)


def listing(
    request: Request, ctx: AppContext, page: int, f: IndexFilter, org_page: bool = False, after: RepoId | None = None
) -> Response:
    """One page of the (filtered) watch list with each repo's newest matching revision — the most
    important change first, every other hazard at medium or above shown too: four queries.

    Pages are keyset pages: `after` (org/name or datasets/org/name, the last repo of the page
    before) is read through the (org, name, repo_type) index at any depth, with or without a filter; `page` (an offset, from links of earlier versions) still
    answers, and its "Next page" link is a keyset one."""
    if after is not None:
        states = ctx.store.repos.watched_matching(f, after=after, limit=PAGE_SIZE + 1)
    else:
        states = ctx.store.repos.watched_matching(f, offset=page * PAGE_SIZE, limit=PAGE_SIZE + 1)
    shown = states[:PAGE_SIZE]
    latest = ctx.store.repos.latest_matching([s.repo for s in shown], f)
    # with a change filter on, the column is the newest *matching* change: say so, and name a newer
    # change that the filter hides (one more query, only then) so the row never reads as the latest
    newest = ctx.store.repos.latest_changes([s.repo for s in shown]) if f.on_changes else latest
    rows = [
        {"state": state, "latest": latest.get(state.repo), "newer": _newer(latest.get(state.repo), newest.get(state.repo))}
        for state in shown
    ]
    filtered = bool(f.q) or f.on_changes or f.repo_type is not None or (f.org is not None and not org_page)
    context: dict[str, Any] = {
        "rows": rows,
        "page": page,
        "paged": page > 0 or after is not None,
        "first_query": _query_string(f, None, not org_page),
        "more": len(states) > PAGE_SIZE,
        "next_query": _query_string(f, shown[-1].repo if shown else None, not org_page),
        "org": f.org if org_page else None,
        "filter": f,
        "filtered": filtered,
        "matching_column": f.on_changes,
        "noun": _noun(f.repo_type),
        "repo_types": [t.value for t in RepoType],
        "kinds": [k.value for k in Kind],
        "severities": [s.value for s in Severity],
        "token_problem": TokenProblem.loads(ctx.store.meta(TOKEN_KEY)),
    }
    return ctx.templates.TemplateResponse(request, "index.html", context)


def _noun(repo_type: RepoType | None) -> tuple[str, str]:
    """What the page lists, singular and plural: models, datasets, or both."""
    if repo_type is None:
        return "model or dataset", "models and datasets"
    return repo_type.value, f"{repo_type.value}s"


def _newer(matching: FeedItem | None, newest: FeedItem | None) -> FeedItem | None:
    """The repo's newest change when it is not the matching one shown (a filter hides it)."""
    if newest is None or (matching is not None and matching.revision.sha == newest.revision.sha):
        return None
    return newest
