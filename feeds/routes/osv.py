"""The OSV API, shaped like osv.dev's: GET /v1/vulns/{id}, POST /v1/query, POST /v1/querybatch.

As osv.dev, a query nothing matches answers `{}`. So that "clean" and "never seen" differ, a query
naming a commit says whether this server's stored history holds it: `X-Hubwatch-Commit: known|unknown`
on `/v1/query`, and `X-Hubwatch-Unknown-Queries: 0,3` (the indices of the queries whose commit it
does not hold; empty when none) on `/v1/querybatch`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Response

from hubwatch.feeds.builders.osv import (
    OsvQuery,
    QueryError,
    batch_entry,
    page_ids,
    parse_batch,
    parse_query,
    query_response,
)
from hubwatch.feeds.context import AppContext, JsonBody, get_ctx
from hubwatch.feeds.errors import bad_request, not_found
from hubwatch.advisories.osv_export import published_osv
from hubwatch.domain.records import AdvisoryRecord

if TYPE_CHECKING:
    from hubwatch.storage import Store

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["osv"])
Ctx = Annotated[AppContext, Depends(get_ctx)]


COMMIT_HEADER = "X-Hubwatch-Commit"
UNKNOWN_HEADER = "X-Hubwatch-Unknown-Queries"


def _matching(store: "Store", query: OsvQuery) -> tuple[list[str], bool | None]:
    """The ids of every live advisory the query asks about (the store applies OSV GIT-range
    semantics through its events index, decoding no record), and whether the commit it names is
    in the stored history (None: the query names no commit)."""
    if query.repo is None:
        assert query.commit is not None
        if not store.revisions.repos_holding(query.commit):
            return [], False
        return [advisory_id for _repo, advisory_id in store.advisories.ids_for_commit(query.commit)], True
    sha = query.commit or query.version
    if sha is None:
        return store.advisories.live_ids(query.repo), None
    entry = store.revision(query.repo, sha)
    if entry is None:
        return [], False  # a commit this repo's stored history does not hold: nothing is known about it
    return store.advisories.ids_affecting(query.repo, entry.revision.sha), True


def _page(store: "Store", query: OsvQuery, size: int) -> tuple[list[AdvisoryRecord], str | None, bool | None]:
    """One page of the query's answer, by id: only the page's records are read and decoded."""
    ids, known = _matching(store, query)
    chunk, token = page_ids(ids, query.page_token, size)
    records = sorted(store.advisories.by_id(chunk), key=lambda a: a.id)
    return records, token, known


@router.get("/vulns/{vuln_id}")
def get_vuln(vuln_id: str, ctx: Ctx) -> dict[str, Any]:
    advisory = ctx.store.advisories.get(vuln_id)
    if advisory is None:
        raise not_found(f"no advisory with id {vuln_id!r}")
    return published_osv(advisory)


@router.post("/query")
def query(raw: JsonBody, response: Response, ctx: Ctx) -> dict[str, Any]:
    try:
        parsed = parse_query(raw)
        chunk, token, known = _page(ctx.store, parsed, ctx.settings.osv_page_size)
    except QueryError as exc:
        raise bad_request(str(exc)) from exc
    if known is not None:
        response.headers[COMMIT_HEADER] = "known" if known else "unknown"
    return query_response(chunk, token)


@router.post("/querybatch")
def querybatch(raw: JsonBody, response: Response, ctx: Ctx) -> dict[str, Any]:
    try:
        queries = parse_batch(raw)
        results, unknown = [], []
        for index, parsed in enumerate(queries):
            chunk, token, known = _page(ctx.store, parsed, ctx.settings.osv_page_size)
            results.append(batch_entry(chunk, token))
            if known is False:
                unknown.append(str(index))
    except QueryError as exc:
        raise bad_request(str(exc)) from exc
    response.headers[UNKNOWN_HEADER] = ",".join(unknown)
    return {"results": results}
