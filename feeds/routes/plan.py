"""`/plan`: paste a config.json (a form POST) or name a watched repo and revision (GET or POST), and get the
estimate panel the model page shows; plus the model page's panel context (`model_estimate`).

Plain HTML forms, no JavaScript. A pasted body is read up to a bound; hostile or invalid JSON, an
unknown repo or a bad setting is a message on the page (400) naming the field, never a 500.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse

from hubwatch.domain.records import RepoId
from hubwatch.domain.remote_data import load_remote_json
from hubwatch.feeds.builders.estimate_panel import EstimatePanel, PanelCache, PanelError
from hubwatch.feeds.builders.plan import MAX_CONFIG_BYTES, config_panel, resolve_revision, revision_panel
from hubwatch.feeds.builders.plan_dataset import PlanDataset, with_dataset
from hubwatch.feeds.builders.plan_settings import CHOICES, PlanInputError, form_values, plan_settings
from hubwatch.feeds.context import AppContext, get_ctx, read_form
from hubwatch.feeds.errors import ApiError
from hubwatch.storage.errors import AmbiguousRevision

__all__ = ["model_estimate", "panel_cache", "router"]

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)
Ctx = Annotated[AppContext, Depends(get_ctx)]
# The form's body: the config (URL-encoded: up to 3 bytes per byte) and the short fields.
MAX_FORM_BYTES = 3 * MAX_CONFIG_BYTES + 16 * 1024


def panel_cache(request: Request) -> PanelCache:
    """The app's cache of recent panels (made on first use, one per app)."""
    cache = getattr(request.app.state, "estimate_panels", None)
    if not isinstance(cache, PanelCache):
        cache = PanelCache()
        request.app.state.estimate_panels = cache
    return cache


def model_estimate(request: Request, ctx: AppContext, repo: RepoId, sha: str | None) -> dict[str, Any]:
    """The model page's panel context: the latest revision's estimate at the query's settings."""
    params = request.query_params
    values = form_values(params)
    panel: EstimatePanel | PanelError | None = None
    chosen: PlanDataset | None = None
    if sha is not None:
        try:
            settings, chosen = with_dataset(ctx.store, plan_settings(params))
            panel = revision_panel(ctx.store, panel_cache(request), repo, sha, settings)
        except PlanInputError as exc:
            panel = PanelError(exc.field, str(exc))
    return {"estimate_panel": panel, "estimate_form": values, "estimate_choices": CHOICES, "estimate_dataset": chosen}


async def form_body(request: Request) -> dict[str, str]:
    """The /plan form's fields (a FastAPI dependency, on the event loop): the bounded body reader of
    `context.read_form`, with what to do instead when it is too large or not a form."""
    try:
        return await read_form(request, MAX_FORM_BYTES)
    except ApiError as exc:
        if exc.status == 413:
            raise ApiError(413, exc.code, f"{exc.message}: a config.json is at most {MAX_CONFIG_BYTES} bytes here "
                                          "(paste config.json alone, not weights)") from exc
        if exc.status == 415:
            raise ApiError(415, exc.code, f"{exc.message}; the JSON API is POST /api/v1/plan") from exc
        raise


Form = Annotated[dict[str, str], Depends(form_body)]


def _parse_config(text: str) -> dict[str, Any]:
    size = len(text.encode())
    if size > MAX_CONFIG_BYTES:
        raise PlanInputError("config", f"{size} bytes is more than the {MAX_CONFIG_BYTES} a config.json may have "
                                       "here (paste config.json alone)")
    try:
        value = load_remote_json(text, max_bytes=MAX_CONFIG_BYTES)
    except ValueError as exc:  # not JSON, or nested beyond any real config
        raise PlanInputError("config", f"not valid JSON ({exc}); paste the model's config.json as it is") from exc
    if not isinstance(value, dict):
        raise PlanInputError("config", f"expected a JSON object (the model's config.json), got {type(value).__name__}")
    return value


def _render(request: Request, ctx: AppContext, params: Mapping[str, str], *, pasted: bool) -> Response:
    """The /plan page for the given fields: the panel of the pasted config or of repo@revision, or a form."""
    config_text = params.get("config", "") if pasted else ""
    repo_text = (params.get("repo") or "").strip()
    revision = (params.get("revision") or "").strip()
    panel: EstimatePanel | PanelError | None = None
    source: str | None = None
    chosen: PlanDataset | None = None
    try:
        settings, chosen = with_dataset(ctx.store, plan_settings(params))
        if config_text.strip():
            panel = config_panel(panel_cache(request), _parse_config(config_text), settings)
            source = "the pasted config.json (no weights: the checkpoint count needs a watched repo)"
        elif repo_text:
            repo, sha = resolve_revision(ctx.store, repo_text, revision)
            panel = revision_panel(ctx.store, panel_cache(request), repo, sha, settings)
            source = f"{repo} at {sha[:12]}, from the files hubwatch stored"
            if panel is None:
                panel = PanelError("repo", f"repo: {repo} at {sha[:12]} has no readable config.json stored")
        elif pasted:
            panel = PanelError("config", "config: paste a config.json, or give a watched repo (org/name)")
    except PlanInputError as exc:
        panel = PanelError(exc.field, str(exc))
    except AmbiguousRevision as exc:
        panel = PanelError("revision", f"revision: {exc}: give more characters of the commit sha")
    context: dict[str, Any] = {
        "estimate_panel": panel, "estimate_form": form_values(params), "estimate_choices": CHOICES,
        "estimate_dataset": chosen if not isinstance(panel, PanelError) else None,
        "config_text": config_text[:MAX_CONFIG_BYTES], "repo_text": repo_text[:200], "revision": revision[:64],
        "source": source, "max_config_bytes": MAX_CONFIG_BYTES,
    }
    status = 400 if isinstance(panel, PanelError) else 200
    return ctx.templates.TemplateResponse(request, "plan.html", context, status_code=status)


@router.get("/plan")
def plan_page(request: Request, ctx: Ctx) -> Response:
    """The form; with `?repo=org/name` (and `revision`, settings) the panel of that stored revision."""
    return _render(request, ctx, request.query_params, pasted=False)


@router.post("/plan")
def plan_submit(request: Request, ctx: Ctx, form: Form) -> Response:
    """A submitted form: the pasted `config` (or `repo`/`revision`) at the form's settings."""
    return _render(request, ctx, form, pasted=True)
