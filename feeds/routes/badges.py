"""Badge routes: shields.io endpoint JSON for a model and for a pinned revision."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from hubwatch.feeds.builders.badges import model_badge, pin_badge
from hubwatch.feeds.builders.standing import load_standing
from hubwatch.feeds.context import AppContext, get_ctx, repo_from_path
from hubwatch.feeds.errors import not_found
from hubwatch.feeds.routes.common import not_watched, parse_severity, require_known
from hubwatch.domain.records import Severity

__all__ = ["router"]

router = APIRouter(prefix="/badges", tags=["badges"])
Ctx = Annotated[AppContext, Depends(get_ctx)]


@router.get("/{org}/{name}/revisions/{sha}.json")
@router.get("/datasets/{org}/{name}/revisions/{sha}.json")
def revision_badge(
    request: Request, org: str, name: str, sha: str, ctx: Ctx, min_severity: str = "low",
    ignore: Annotated[list[str] | None, Query()] = None,
) -> dict[str, Any]:  # fmt: skip
    """The pin's standing as a badge ("2 hazards", "lacks 3 updates", "up to date", "unknown revision")."""
    repo = repo_from_path(org, name, request)
    severity = parse_severity(min_severity) or Severity.LOW
    result = load_standing(ctx.store, repo, sha, ignore or ())
    if result is None:
        raise not_watched(repo)
    return pin_badge(result, severity)


@router.get("/{org}/{name}.json")
@router.get("/datasets/{org}/{name}.json")
def repo_badge(request: Request, org: str, name: str, ctx: Ctx) -> dict[str, Any]:
    repo = repo_from_path(org, name, request)
    require_known(ctx.store, repo)
    items = ctx.store.repos.recent_changes(1, repo=repo)
    off = ctx.store.revisions.off_main_branch(repo) if items else frozenset()
    if items and items[0].revision.sha in off:
        # a force-push dropped the newest change: the badge tells the main line's (at most len(off)
        # changed revisions are off it, so one more than that reaches the line's newest, if any)
        items = [i for i in ctx.store.repos.recent_changes(len(off) + 1, repo=repo) if i.revision.sha not in off][:1]
    latest = list(items[0].changes) if items else None
    if latest is None and ctx.store.head(repo) is not None:
        latest = []  # revisions stored, none with a tracked change
    return model_badge(latest, ctx.store.advisories.live_count(repo))  # counted in the database
