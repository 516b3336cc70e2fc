"""The OSV API, shaped like osv.dev's: GET /v1/vulns/{id}, POST /v1/query, POST /v1/querybatch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Request

from hubwatch.feeds.builders.osv import (
    OsvQuery,
    QueryError,
    batch_entry,
    page,
    parse_batch,
    parse_query,
    query_response,
)
from hubwatch.feeds.context import AppContext, get_ctx, read_json
from hubwatch.feeds.errors import bad_request, not_found
from hubwatch.advisories.osv_export import published_osv
from hubwatch.domain.records import AdvisoryRecord

if TYPE_CHECKING:
    from hubwatch.storage import Store

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["osv"])
Ctx = Annotated[AppContext, Depends(get_ctx)]


def _matching(store: "Store", query: OsvQuery) -> list[AdvisoryRecord]:
    """Every live advisory the query asks about (the store applies OSV GIT-range semantics)."""
    if query.repo is None:
        assert query.commit is not None
        return [advisory for _repo, advisory in store.advisories_for_commit(query.commit)]
    sha = query.commit or query.version
    if sha is None:
        return [a for a in store.advisories(query.repo) if a.withdrawn is None]
    entry = store.revision(query.repo, sha)
    if entry is None:
        return []  # a commit this repo's stored history does not hold: nothing known affects it
    return store.advisories_affecting(query.repo, entry.revision.sha)


@router.get("/vulns/{vuln_id}")
def get_vuln(vuln_id: str, ctx: Ctx) -> dict[str, Any]:
    advisory = ctx.store.advisory(vuln_id)
    if advisory is None:
        raise not_found(f"no advisory with id {vuln_id!r}")
    return published_osv(advisory)


@router.post("/query")
async def query(request: Request, ctx: Ctx) -> dict[str, Any]:
    raw = await read_json(request)
    try:
        parsed = parse_query(raw)
        chunk, token = page(_matching(ctx.store, parsed), parsed.page_token, ctx.settings.osv_page_size)
    except QueryError as exc:
        raise bad_request(str(exc)) from exc
    return query_response(chunk, token)


@router.post("/querybatch")
async def querybatch(request: Request, ctx: Ctx) -> dict[str, Any]:
    raw = await read_json(request)
    try:
        queries = parse_batch(raw)
        results = []
        for parsed in queries:
            chunk, token = page(_matching(ctx.store, parsed), parsed.page_token, ctx.settings.osv_page_size)
            results.append(batch_entry(chunk, token))
    except QueryError as exc:
        raise bad_request(str(exc)) from exc
    return {"results": results}
