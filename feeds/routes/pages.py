"""HTML pages: the index of watched models, a model's history, a revision's diff, an advisory;
and the Markdown twin of each model page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from hubwatch.feeds.builders.badges import advisory_severity
from hubwatch.feeds.builders.markdown import model_markdown
from hubwatch.feeds.builders.plots import Series, line_chart
from hubwatch.feeds.builders.views import EstimateView, HistoryEntryLike, estimate_view
from hubwatch.feeds.context import AppContext, get_ctx, repo_from_path
from hubwatch.feeds.errors import not_found
from hubwatch.feeds.conditional import cached_response
from hubwatch.feeds.routes.common import repo_state, require_known
from hubwatch.feeds.text import fmt_bytes, fmt_count, short_sha

__all__ = ["router"]

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)
Ctx = Annotated[AppContext, Depends(get_ctx)]
PAGE_SIZE = 100


@dataclass(frozen=True)
class RevisionView:
    entry: HistoryEntryLike
    estimate: EstimateView | None


def _charts(revisions: list[RevisionView]) -> list[Markup]:
    """Parameters and memory per method over the revisions (oldest first)."""
    ordered = list(reversed(revisions))
    labels = [short_sha(r.entry.revision.sha) for r in ordered]
    params = Series("parameters", tuple(float(r.estimate.params) if r.estimate and r.estimate.params else None
                                        for r in ordered))
    methods = sorted({m for r in ordered if r.estimate for m, _ in r.estimate.memory})
    memory = [
        Series(m, tuple(float(dict(r.estimate.memory)[m]) if r.estimate and m in dict(r.estimate.memory) else None
                        for r in ordered))
        for m in methods
    ]
    charts = [
        line_chart("Parameters per revision", labels, [params], fmt_count),
        line_chart("Memory per method per revision", labels, memory, fmt_bytes),
    ]
    return [c for c in charts if c]


@router.get("/")
def index(request: Request, ctx: Ctx, page: int = 0) -> Response:
    states = sorted(ctx.store.watched(), key=lambda s: str(s.repo))
    shown = states[page * PAGE_SIZE : (page + 1) * PAGE_SIZE] if page >= 0 else []
    rows = []
    for state in shown:
        latest = ctx.store.recent_changes(1, repo=state.repo)
        rows.append({"state": state, "latest": latest[0] if latest else None})
    context: dict[str, Any] = {"rows": rows, "page": page, "more": len(states) > (page + 1) * PAGE_SIZE}
    return ctx.templates.TemplateResponse(request, "index.html", context)


@router.get("/models/{org}/{name}.md")
def model_md(request: Request, org: str, name: str, ctx: Ctx) -> Response:
    repo = repo_from_path(org, name)
    entries = ctx.store.history(repo)
    if not entries:
        require_known(ctx.store, repo)
    body = model_markdown(repo, entries, ctx.base_url, ctx.settings.hub_endpoint).encode()
    last = max((e.revision.date for e in entries), default=None)
    return cached_response(request, body, "text/markdown; charset=utf-8", last)


@router.get("/models/{org}/{name}")
def model_page(request: Request, org: str, name: str, ctx: Ctx) -> Response:
    repo = repo_from_path(org, name)
    entries = ctx.store.history(repo)
    state = repo_state(ctx.store, repo)
    if not entries and state is None:
        raise not_found(f"{repo} is not watched by this hubwatch")
    revisions = [RevisionView(e, estimate_view(e.estimate)) for e in sorted(entries, key=lambda e: -e.position)]
    context: dict[str, Any] = {
        "repo": repo,
        "state": state,
        "revisions": revisions,
        "charts": _charts(revisions),
        "hub_url": repo.url(ctx.settings.hub_endpoint),
    }
    return ctx.templates.TemplateResponse(request, "model.html", context)


@router.get("/models/{org}/{name}/revisions/{sha}")
def revision_page(request: Request, org: str, name: str, sha: str, ctx: Ctx) -> Response:
    repo = repo_from_path(org, name)
    entry = ctx.store.revision(repo, sha.lower())
    if entry is None:
        raise not_found(f"{repo} has no stored revision {sha!r}")
    raised = [a for a in (ctx.store.advisory(i) for i in entry.advisory_ids) if a is not None]
    context: dict[str, Any] = {
        "repo": repo,
        "entry": entry,
        "estimate": estimate_view(entry.estimate),
        "raised": raised,
        "affecting": ctx.store.advisories_affecting(repo, entry.revision.sha),
        "hub_url": repo.url(ctx.settings.hub_endpoint),
    }
    return ctx.templates.TemplateResponse(request, "revision.html", context)


@router.get("/advisories/{advisory_id}")
def advisory_page(request: Request, advisory_id: str, ctx: Ctx) -> Response:
    advisory = ctx.store.advisory(advisory_id)
    if advisory is None:
        raise not_found(f"no advisory with id {advisory_id!r}")
    context: dict[str, Any] = {"advisory": advisory, "severity": advisory_severity(advisory)}
    return ctx.templates.TemplateResponse(request, "advisory.html", context)
