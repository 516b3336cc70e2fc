"""HTML pages: the index of watched models (all, or one org's), a model's history, a revision's diff, an advisory;
and the Markdown twin of each model page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from hubwatch.feeds.builders.badges import advisory_severity
from hubwatch.feeds.builders.card_datasets import CardDatasets, card_datasets
from hubwatch.feeds.builders.dataset_cost import DatasetCost, dataset_cost
from hubwatch.feeds.builders.dataset_facts import DatasetFacts, dataset_facts
from hubwatch.feeds.builders.markdown import model_markdown
from hubwatch.feeds.builders.head_cache import head_standing, per_version
from hubwatch.feeds.builders.standing import load_standing, pin_headline, relations
from hubwatch.feeds.builders.plots import Series, line_chart
from hubwatch.feeds.builders.views import EstimateView, HistoryEntryLike, chart_view, estimate_view, stored_estimate
from hubwatch.feeds.context import AppContext, get_ctx, org_from_path, repo_from_path
from hubwatch.feeds.errors import not_found
from hubwatch.feeds.conditional import cached_response
from hubwatch.feeds.routes.compare import revision_rows
from hubwatch.feeds.routes.listing import index_filter, listing
from hubwatch.feeds.routes.common import (
    AfterQuery,
    PageQuery,
    not_watched,
    parse_after,
    parse_cursor,
    repo_state,
    require_known,
)
from hubwatch.feeds.routes.plan import model_estimate, panel_cache
from hubwatch.feeds.text import fmt_bytes, fmt_count, page_path, short_sha
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, RepoId, RevisionRecord
from hubwatch.storage.repos.index import IndexFilter
from hubwatch.storage.core.summaries import RepoSummary
from hubwatch.storage.core.values import EstimatePoint, HistoryRestore, HistoryRewrite

__all__ = [
    "CHART_POINTS",
    "MODEL_PAGE_SIZE",
    "RevisionLine",
    "history_charts",
    "revision_charts",
    "revision_line",
    "router",
]

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)
Ctx = Annotated[AppContext, Depends(get_ctx)]
IndexQuery = Annotated[IndexFilter, Depends(index_filter)]
PAGE_SIZE = 100
MODEL_PAGE_SIZE = 50  # revisions a model page lists (one line each; the revision page has the rest)
CHART_POINTS = 60  # revisions the model page's charts plot at most, spread over the whole history


@dataclass(frozen=True)
class RevisionLine:
    """One revision as the model page lists it: its most severe change in words, how many more,
    and the parameter count of its estimate."""

    entry: HistoryEntryLike
    top: ChangeRecord | None
    more: int
    params: int | None


def revision_line(entry: HistoryEntryLike) -> RevisionLine:
    changes = list(entry.changes)
    top = max(changes, key=lambda c: c.severity.rank, default=None)  # the first of the most severe
    view = chart_view(entry.estimate)  # decodes the params and memory keys only
    return RevisionLine(entry, top, max(0, len(changes) - 1), view.params if view else None)


def revision_charts(labels: Sequence[str], estimates: Sequence[EstimateView | None]) -> list[Markup]:
    """Parameters and memory per method over the revisions labelled `labels` (oldest first)."""
    params = Series("parameters", tuple(float(e.params) if e and e.params else None for e in estimates))
    methods = list(dict.fromkeys(m for e in estimates if e for m, _ in e.memory))  # estimator order
    memory = [
        Series(m, tuple(float(dict(e.memory)[m]) if e and m in dict(e.memory) else None for e in estimates))
        for m in methods
    ]
    charts = [
        line_chart("Parameters per revision", list(labels), [params], fmt_count),
        line_chart("Memory per method per revision", list(labels), memory, fmt_bytes),
    ]
    return [c for c in charts if c]


def history_charts(points: Sequence[EstimatePoint]) -> list[Markup]:
    """The model page's charts over the whole history (`store.revisions.estimate_series`, oldest first, at
    most CHART_POINTS revisions spread over it), whichever page of revisions is shown; only the
    charted figures of each estimate are decoded."""
    return revision_charts([short_sha(p.sha) for p in points], [chart_view(p.estimate) for p in points])


@router.get("/")
def index(request: Request, ctx: Ctx, f: IndexQuery, page: PageQuery = 0, after: AfterQuery = None) -> Response:
    """Watched models and datasets: `?q=` part of the name, `?type=model|dataset`, `?org=`, `?kind=`,
    `?severity=` (lowest), `?since=`; `?after=org/name` for the next page."""
    return listing(request, ctx, page, f, after=parse_after(after))


@router.get("/orgs/{org}")
def org_page(
    request: Request, org: str, ctx: Ctx, f: IndexQuery, page: PageQuery = 0, after: AfterQuery = None
) -> Response:
    """The watched models and datasets of one organisation (user) on the hub, with its feed (and the
    same filters)."""
    org = org_from_path(org)
    first = ctx.store.repos.watched(org=org, limit=1)  # the org matched case-insensitively, as the hub does
    cursor = parse_after(after)
    if page == 0 and cursor is None and not first:
        raise not_found(f"no watched model or dataset of {org!r} in this hubwatch")
    spelled = first[0].repo.org if first else org  # shown as the store spells it
    return listing(request, ctx, page, replace(f, org=spelled), org_page=True, after=cursor)


@router.get("/models/{org}/{name}.md")
@router.get("/datasets/{org}/{name}.md")
def model_md(request: Request, org: str, name: str, ctx: Ctx, before: str | None = None) -> Response:
    """The Markdown twin of the model page: the newest 100 revisions (keyset: `?before=` for older)."""
    repo = repo_from_path(org, name, request)
    cursor = parse_cursor(before)
    page, older = ctx.store.revisions.history_page(repo, before=cursor, limit=PAGE_SIZE)
    if not page and cursor is None:
        require_known(ctx.store, repo)
    entries = page[::-1]  # oldest first, as `history` gives them: ties keep their storage order
    newest: HistoryEntryLike | None = max(entries, key=lambda e: e.position, default=None)
    if cursor is not None:
        first = ctx.store.revisions.history_page(repo, limit=1)[0]
        newest = max(first, key=lambda e: e.position, default=None)
    newest = _at_head(ctx, repo, newest, ctx.store.head(repo))
    head = _head_standing(ctx, repo, newest.revision.sha if newest is not None else None)
    verdict = (head["head_headline"], head["head_standing"].suggested) if head["head_standing"] else None
    older_url = f"{ctx.base_url}{page_path(repo)}.md?before={older[0]}.{older[1]}" if older is not None else None
    total = ctx.store.revisions.revision_count(repo)
    body = model_markdown(repo, entries, ctx.base_url, ctx.settings.hub_web_url, verdict, total, older_url).encode()
    last = max((e.revision.date for e in entries), default=None)
    return cached_response(request, body, "text/markdown; charset=utf-8", last)


@router.get("/models/{org}/{name}")
@router.get("/datasets/{org}/{name}")
def model_page(request: Request, org: str, name: str, ctx: Ctx, before: str | None = None) -> Response:
    """A model's (or a dataset's) verdict, its charts and one page of its history, newest first,
    one line a revision (keyset: `?before=` for older; rel=prev/next links). Bounded work at any
    depth. A dataset's page shows its own facts where a model's shows the estimate panel."""
    repo = repo_from_path(org, name, request)
    cursor = parse_cursor(before)
    entries, older = ctx.store.revisions.history_page(repo, before=cursor, limit=MODEL_PAGE_SIZE)
    state = repo_state(ctx.store, repo)
    if not entries and state is None and cursor is None:
        raise not_watched(repo)
    newest: HistoryEntryLike | None = entries[0] if entries and cursor is None else None
    newer: str | None = None  # the rel=prev link's query ("" for the newest page)
    if cursor is not None:
        first, _ = ctx.store.revisions.history_page(repo, limit=1)
        newest = first[0] if first else None
        exists, newer_cursor = ctx.store.revisions.newer_page(repo, cursor, MODEL_PAGE_SIZE)
        if exists:
            newer = f"?before={newer_cursor[0]}.{newer_cursor[1]}" if newer_cursor is not None else ""
    rewrites = ctx.store.revisions.rewrites(repo)
    if rewrites:  # upstream rewound: the newest stored revision need not be its head
        newest = _at_head(ctx, repo, newest, ctx.store.head(repo))
    summary = ctx.store.summary(repo)  # the count, and the version whole-history results are kept by
    charts = per_version(
        ctx.store, summary, "charts", lambda: history_charts(ctx.store.revisions.estimate_series(repo, CHART_POINTS))
    )
    context: dict[str, Any] = {
        "newest": newest,
        "newest_estimate": estimate_view(stored_estimate(newest)) if newest is not None else None,
        "total": summary.revisions if summary is not None else 0,
        "older": f"{older[0]}.{older[1]}" if older is not None else None,
        "newer": newer,
        "paged": cursor is not None,
        "rewrites": rewrites,
        "head_moves": _head_moves(rewrites, ctx.store.revisions.restores(repo) if rewrites else []),
        "renames": ctx.store.repos.renames(repo),
        "dropped": ctx.store.revisions.off_main_branch(repo) if rewrites else frozenset(),
        "repo": repo,
        "state": state,
        "revisions": [revision_line(e) for e in entries],
        "charts": charts,
        **_head_standing(ctx, repo, newest.revision.sha if newest is not None else None, summary),
        **_facts_or_estimate(request, ctx, repo, newest.revision.sha if newest is not None else None),
        "card_datasets": _card_datasets(ctx, repo, newest.revision.sha if newest is not None else None),
        "hub_url": repo.url(ctx.settings.hub_web_url),
        "in_derivatives": ctx.store.derivatives(ctx.clock).in_derivatives(repo),  # the derivatives page link
    }
    return ctx.templates.TemplateResponse(request, "model.html", context)


def _at_head(
    ctx: AppContext, repo: RepoId, newest: HistoryEntryLike | None, head: RevisionRecord | None
) -> HistoryEntryLike | None:
    """The entry the verdict, the headline and the estimate panel describe: the recorded head's.
    After a force-push back to older commits the newest stored revision is a dropped one; the
    page names the revision upstream is at (`newest` when that is the head, or nothing is known)."""
    if newest is None or head is None or head.sha == newest.revision.sha:
        return newest
    return ctx.store.revision(repo, head.sha) or newest


def _head_standing(
    ctx: AppContext, repo: RepoId, head: str | None, summary: RepoSummary | None = None
) -> dict[str, Any]:
    """The model page's verdict: the standing of a pin at the latest revision (computed once per
    history version: head_cache)."""
    result = head_standing(ctx.store, repo, head, summary) if head is not None else None
    if result is None:
        return {"head_standing": None}
    hits = [a.id for a in result.carries]
    return {
        "head_standing": result,
        "head_headline": pin_headline(result, "a pin at the latest revision"),
        "head_carries": relations(result.carries, head or "", hits, result.ignored),
    }


def _facts_or_estimate(request: Request, ctx: AppContext, repo: RepoId, sha: str | None) -> dict[str, Any]:
    """A model page's estimate panel, or a dataset page's facts at `sha` (its latest revision)."""
    if not repo.is_dataset:
        return model_estimate(request, ctx, repo, sha)
    entry = ctx.store.revision(repo, sha) if sha is not None else None
    return {"dataset": _dataset_facts(ctx, repo, sha),
            "dataset_cost": _dataset_cost(request, ctx, repo, sha, entry.revision.parent if entry else None)}


def _dataset_facts(ctx: AppContext, repo: RepoId, sha: str | None) -> DatasetFacts | None:
    if sha is None:
        return None
    files, contents = ctx.store.revisions.snapshot_files(repo, sha)
    return dataset_facts(sha, files, contents)


def _card_datasets(ctx: AppContext, repo: RepoId, sha: str | None) -> CardDatasets | None:
    """The datasets a model's card names at `sha` (its README.md alone read back), the watched
    ones found in one query; None for a dataset, or a card naming none."""
    if repo.is_dataset or sha is None:
        return None
    readme = ctx.store.revisions.stored_file(repo, sha, "README.md")
    return card_datasets(readme, ctx.store.repos.watched_ids, ctx.settings.hub_web_url)
def _dataset_cost(request: Request, ctx: AppContext, repo: RepoId, sha: str | None, parent: str | None
                  ) -> DatasetCost | None:
    """The cost of one epoch of a fine-tune on the dataset at `sha`, and its change against `parent`."""
    if sha is None:
        return None
    return dataset_cost(ctx.store, panel_cache(request), repo, sha, parent, request.query_params)


@router.get("/models/{org}/{name}/revisions/{sha}")
@router.get("/datasets/{org}/{name}/revisions/{sha}")
def revision_page(request: Request, org: str, name: str, sha: str, ctx: Ctx) -> Response:
    repo = repo_from_path(org, name, request)
    entry = ctx.store.revision(repo, sha.lower())
    if entry is None:
        raise not_found(f"{repo} has no stored revision {sha!r}")
    shown = entry.revision.sha
    raised = [a for a in (ctx.store.advisories.get(i) for i in entry.advisory_ids) if a is not None]
    result = load_standing(ctx.store, repo, shown)
    assert result is not None  # the repo holds this revision
    hits = [a.id for a in result.lacks + result.carries]
    context: dict[str, Any] = {
        "repo": repo,
        "entry": entry,
        "estimate": estimate_view(stored_estimate(entry)),
        "standing": result,
        "headline": pin_headline(result),
        "lacks": relations(result.lacks, shown, hits, result.ignored),
        "carries": relations(result.carries, shown, hits, result.ignored),
        "on_the_way": result.on_the_way,
        "raised": relations(raised, shown, hits),
        "resolved": relations(ctx.store.advisories.fixed_at(repo, shown), shown, hits),  # by the events index
        "hub_url": repo.url(ctx.settings.hub_web_url),
        "rows": revision_rows(ctx, repo, entry),
        "latest": result.newest,
        "dataset": _dataset_facts(ctx, repo, shown) if repo.is_dataset else None,
        "card_datasets": _card_datasets(ctx, repo, shown),
        "dataset_cost": _dataset_cost(request, ctx, repo, shown, entry.revision.parent) if repo.is_dataset else None,
    }
    return ctx.templates.TemplateResponse(request, "revision.html", context)


@router.get("/advisories/{advisory_id}")
def advisory_page(request: Request, advisory_id: str, ctx: Ctx) -> Response:
    advisory = ctx.store.advisories.get(advisory_id)
    if advisory is None:
        raise not_found(f"no advisory with id {advisory_id!r}")
    context: dict[str, Any] = {"advisory": advisory, "severity": advisory_severity(advisory)}
    return ctx.templates.TemplateResponse(request, "advisory.html", context)


def _head_moves(rewrites: list[HistoryRewrite], restores: list[HistoryRestore]) -> list[tuple[str, Any]]:
    """The repo's force-pushes and restores as (kind, record), newest first (a restore after the
    rewrite it undoes when both were seen at once)."""
    moves = [("rewrite", r) for r in rewrites] + [("restore", r) for r in restores]
    return sorted(moves, key=lambda m: (m[1].detected_at, m[0] == "restore"), reverse=True)
