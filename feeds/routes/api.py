"""The JSON API: watched models and datasets, one repo's state, its history, one revision, a pin's standing, and
`POST /api/v1/plan`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query, Request, Response

from hubwatch.feeds.builders.standing import load_standing
from hubwatch.feeds.builders.views import history_json, revision_json
from hubwatch.feeds.context import AppContext, JsonBody, get_ctx, repo_from_path
from hubwatch.feeds.errors import bad_request, not_found
from hubwatch.feeds.routes.common import (
    AfterQuery,
    PageQuery,
    not_watched,
    parse_after,
    parse_cursor,
    parse_type,
    require_known,
)
from hubwatch.feeds.builders.plan import plan_estimate
from hubwatch.storage.repos.index import IndexFilter
from hubwatch.feeds.text import page_path, rfc3339

if TYPE_CHECKING:
    from hubwatch.storage.core.values import RepoState

__all__ = ["router"]

router = APIRouter(prefix="/api/v1", tags=["api"])
Ctx = Annotated[AppContext, Depends(get_ctx)]


MODELS_PAGE = 1000
HISTORY_PAGE = 1000


@router.get("/models")
def models(
    ctx: Ctx,
    page: PageQuery = 0,
    after: AfterQuery = None,
    repo_type: Annotated[str, Query(alias="type", max_length=40, description="model or dataset")] = "",
) -> dict[str, Any]:
    """Watched repos (models and datasets, each with its `type`; `?type=model|dataset` for one kind)
    by org/name, 1000 a page; `next` is the URL of the next page when there is one (a keyset cursor,
    `?after=org/name`: read through the index at any depth; `?page=` still answers)."""
    if page < 0:
        raise bad_request(f"page must be ≥ 0, got {page}")
    cursor = parse_after(after)
    wanted = IndexFilter(repo_type=parse_type(repo_type.strip()))
    if cursor is not None:
        states = ctx.store.repos.watched_matching(wanted, after=cursor, limit=MODELS_PAGE + 1)
    else:
        states = ctx.store.repos.watched_matching(wanted, offset=page * MODELS_PAGE, limit=MODELS_PAGE + 1)
    out: dict[str, Any] = {"models": [_model_row(ctx, state) for state in states[:MODELS_PAGE]]}
    if len(states) > MODELS_PAGE:
        query = [("type", wanted.repo_type.value)] if wanted.repo_type is not None else []
        query.append(("after", str(states[MODELS_PAGE - 1].repo)))
        out["next"] = f"{ctx.base_url}/api/v1/models?{urlencode(query)}"
    return out


def _model_row(ctx: AppContext, state: RepoState) -> dict[str, Any]:
    return {
        "repo": str(state.repo),
        "type": state.repo.repo_type.value,
        "state": state.state,
        "last_error": state.last_error,
        "head_sha": state.head_sha,
        "last_polled_at": rfc3339(state.last_polled_at) if state.last_polled_at else None,
        "revision_count": state.revision_count,
        "url": f"{ctx.base_url}{page_path(state.repo)}",
    }


@router.get("/models/{org}/{name}")
@router.get("/datasets/{org}/{name}")
def model(request: Request, org: str, name: str, ctx: Ctx) -> dict[str, Any]:
    """One watched repo as `/api/v1/models` lists it (state, head, last poll, revision count): what
    `hubwatch check --server` reads to say why a pin's commit is unknown. Not watched: a 404."""
    repo = repo_from_path(org, name, request)
    state = ctx.store.repo_state(repo)
    if state is None or not state.watched:
        raise not_watched(repo)
    return _model_row(ctx, state)


@router.get("/models/{org}/{name}/history")
@router.get("/datasets/{org}/{name}/history")
def history(
    request: Request, org: str, name: str, response: Response, ctx: Ctx, before: str | None = None
) -> list[dict[str, Any]]:
    """The newest 1000 revisions older than the keyset cursor `?before=POSITION.ID`, oldest first
    (the CLI's shape); while older ones remain, a `Link: <URL>; rel="next"` header names the next page."""
    repo = repo_from_path(org, name, request)
    cursor = parse_cursor(before)
    page, older = ctx.store.revisions.history_page(repo, before=cursor, limit=HISTORY_PAGE)
    if not page and cursor is None:
        require_known(ctx.store, repo)
    if older is not None:
        url = f"{ctx.base_url}/api/v1{page_path(repo)}/history?before={older[0]}.{older[1]}"
        response.headers["Link"] = f'<{url}>; rel="next"'
    return history_json(page[::-1])


@router.get("/models/{org}/{name}/revisions/{sha}")
@router.get("/datasets/{org}/{name}/revisions/{sha}")
def revision(request: Request, org: str, name: str, sha: str, ctx: Ctx) -> dict[str, Any]:
    repo = repo_from_path(org, name, request)
    entry = ctx.store.revision(repo, sha.lower())
    if entry is None:
        raise not_found(f"{repo} has no stored revision {sha!r}")
    return revision_json(str(repo), entry, entry.revision.sha not in ctx.store.revisions.off_main_branch(repo))


@router.get("/models/{org}/{name}/revisions/{sha}/standing")
@router.get("/datasets/{org}/{name}/revisions/{sha}/standing")
def revision_standing(
    request: Request, org: str, name: str, sha: str, ctx: Ctx, ignore: Annotated[list[str] | None, Query()] = None
) -> dict[str, Any]:
    """What a pin at `sha` lacks and carries, and the revision to move to (`?ignore=ID`, repeatable,
    acknowledges an advisory). An unknown commit is `known: false`; an unknown repo a 404."""
    repo = repo_from_path(org, name, request)
    result = load_standing(ctx.store, repo, sha, ignore or ())
    if result is None:
        raise not_watched(repo)
    body = result.to_json()
    if not result.known:
        body["on_main_line"] = None  # a commit the store never saw is on no line it knows
    return body


@router.post("/plan")
def plan(body: JsonBody, ctx: Ctx) -> dict[str, Any]:
    """The estimate of a pasted `config`, or of a watched `repo` at a stored `revision` (default: the
    latest), at `settings` (memory settings) and the cost inputs `epochs`, `samples` and `card`."""
    return plan_estimate(body, ctx.store)  # CPU work: in the thread pool, off the event loop
