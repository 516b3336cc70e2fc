"""Compare any two stored revisions of a repo: `/models/{org}/{name}/compare/BASE...HEAD` (HTML) and
`/api/v1/models/{org}/{name}/compare/BASE...HEAD` (JSON); both read the store and call the pure
builders in `builders.compare`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from markupsafe import Markup

from hubwatch.advisories.pin_standing import steps_along
from hubwatch.advisories.standing import Standing
from hubwatch.diff import diff_repo_snapshots
from hubwatch.domain.parsed_json import parse_once
from hubwatch.domain.records import ChangeRecord, Kind, RepoId
from hubwatch.feeds.builders.compare import (
    BadRange,
    Comparison,
    DiffCache,
    DiffResult,
    Rows,
    advisory_moves,
    comparison_json,
    estimate_deltas,
    parse_range,
    stored_snapshot,
    template_texts,
)
from hubwatch.feeds.builders.dataset_facts import DatasetFacts, dataset_facts
from hubwatch.feeds.builders.standing import load_standing, relations
from hubwatch.feeds.builders.views import estimate_view, stored_estimate
from hubwatch.feeds.context import AppContext, get_ctx, repo_from_path
from hubwatch.feeds.errors import bad_request, not_found
from hubwatch.feeds.routes.common import not_watched
from hubwatch.feeds.text import page_path

if TYPE_CHECKING:
    from hubwatch.domain.snapshot import Snapshot
    from hubwatch.storage import HistoryEntry

__all__ = ["compare_url", "diff_cache", "revision_rows", "router"]

router = APIRouter(tags=["pages"])
Ctx = Annotated[AppContext, Depends(get_ctx)]


def compare_url(base_url: str, repo: RepoId, base: str, head: str) -> str:
    """The compare page of `repo` from `base` to `head` (GitHub's shape, short shas)."""
    return f"{base_url.rstrip('/')}{page_path(repo)}/compare/{base[:12]}...{head[:12]}"


def _entry(ctx: AppContext, repo: RepoId, ref: str) -> "HistoryEntry":
    """The stored revision `ref` names (an ambiguous prefix is a 400 from the store's error)."""
    entry = ctx.store.revision(repo, ref)
    if entry is None:
        if ctx.store.head(repo) is None:
            raise not_watched(repo, " (no stored revision)")
        raise not_found(f"{repo} has no stored revision {ref!r}: see {page_path(repo)} for the revisions it has")
    return entry


def _snapshot(ctx: AppContext, repo: RepoId, sha: str) -> "Snapshot":
    files, contents = ctx.store.revisions.snapshot_files(repo, sha)
    return stored_snapshot(sha, files, contents)


def _standings(ctx: AppContext, repo: RepoId, base: str, head: str) -> tuple[Standing, Standing]:
    """The standing of a pin at `base` and at `head` (two stored full shas), each as `load_standing`
    finds it (from the events index on a linear history)."""
    at_base, at_head = load_standing(ctx.store, repo, base), load_standing(ctx.store, repo, head)
    assert at_base is not None and at_head is not None  # both are stored revisions of the repo
    return at_base, at_head


def diff_cache(request: Request) -> DiffCache:
    """The app's cache of recent compare diffs (made on first use, one per app)."""
    cache = getattr(request.app.state, "compare_diffs", None)
    if not isinstance(cache, DiffCache):
        cache = DiffCache()
        request.app.state.compare_diffs = cache
    return cache


def _compare(ctx: AppContext, cache: DiffCache, repo: RepoId, spec: str) -> tuple[Comparison, DiffResult]:
    try:
        refs = parse_range(spec)
    except BadRange as exc:
        raise bad_request(str(exc)) from exc
    base, head = _entry(ctx, repo, refs.base), _entry(ctx, repo, refs.head)

    def diff() -> DiffResult:
        old, new = _snapshot(ctx, repo, base.revision.sha), _snapshot(ctx, repo, head.revision.sha)
        with parse_once():  # the diff and the full template texts read each JSON file once
            rows: Rows = tuple((c, *template_texts(c, old, new)) for c in diff_repo_snapshots(repo.repo_type, old, new))
        html = ctx.templates.get_template("compare_changes.html").render(rows=rows)  # autoescaped
        return DiffResult(rows, html)

    result = cache.get((repo.key, base.revision.sha, head.revision.sha), diff)
    at_base, at_head = _standings(ctx, repo, base.revision.sha, head.revision.sha)
    resolved, introduced = advisory_moves(at_base, at_head)
    comparison = Comparison(
        repo=repo,
        base=base,
        head=head,
        changes=tuple(change for change, _, _ in result.rows),
        deltas=tuple(estimate_deltas(estimate_view(stored_estimate(base)), estimate_view(stored_estimate(head)))),
        resolved=tuple(resolved),
        introduced=tuple(introduced),
        steps=_steps(ctx, repo, base, head, at_base, at_head),
        off_main_line=tuple(side for side, at in (("BASE", at_base), ("HEAD", at_head)) if not at.on_main_line),
    )
    return comparison, result


def _steps(ctx: AppContext, repo: RepoId, base: HistoryEntry, head: HistoryEntry, at_base: Standing,
           at_head: Standing) -> int | None:
    """Revisions from BASE to HEAD along the main line; None when either is off it. Positions count
    stored revisions, so on a history a force-push rewrote they count the dropped ones too: there the
    main line's index (kept per history version) counts."""
    if not (at_base.on_main_line and at_head.on_main_line):
        return None
    if not ctx.store.revisions.rewrites(repo):
        return head.position - base.position
    return steps_along(ctx.store, repo, base.revision.sha, head.revision.sha)


@router.get("/models/{org}/{name}/compare/{spec}", response_class=HTMLResponse)
@router.get("/datasets/{org}/{name}/compare/{spec}", response_class=HTMLResponse)
def compare_page(request: Request, org: str, name: str, spec: str, ctx: Ctx) -> Response:
    """Every file's semantic diff from BASE to HEAD, the rendered chat-template diffs, the estimate
    deltas (a dataset: its facts at each side) and the advisories a pin moving from BASE to HEAD
    resolves and takes on."""
    repo = repo_from_path(org, name, request)
    comparison, result = _compare(ctx, diff_cache(request), repo, spec)
    head = comparison.head.revision.sha
    hits = [a.id for a in comparison.introduced]
    context: dict[str, Any] = {
        "repo": repo,
        "cmp": comparison,
        "changes_html": Markup(result.html),  # rendered (and escaped) once per pair
        "resolved": relations(comparison.resolved, head, []),
        "introduced": relations(comparison.introduced, head, hits),
        "hub_url": repo.url(ctx.settings.hub_web_url),
        "json_url": f"/api/v1{page_path(repo)}/compare/{spec}",
        "facts": _facts(ctx, repo, comparison.base.revision.sha, head) if repo.is_dataset else None,
    }
    return ctx.templates.TemplateResponse(request, "compare.html", context)


def _facts(ctx: AppContext, repo: RepoId, base: str, head: str) -> tuple[DatasetFacts, DatasetFacts]:
    """A dataset's facts (rows, configs, data files, licence, access) at BASE and at HEAD."""
    return dataset_facts(base, *ctx.store.revisions.snapshot_files(repo, base)), dataset_facts(
        head, *ctx.store.revisions.snapshot_files(repo, head))


@router.get("/api/v1/models/{org}/{name}/compare/{spec}", tags=["api"], response_class=JSONResponse)
@router.get("/api/v1/datasets/{org}/{name}/compare/{spec}", tags=["api"], response_class=JSONResponse)
def compare_json(request: Request, org: str, name: str, spec: str, ctx: Ctx) -> dict[str, Any]:
    """The compare page as JSON (`BASE...HEAD`: full shas or unique prefixes of 7+ characters)."""
    repo = repo_from_path(org, name, request)
    comparison, _ = _compare(ctx, diff_cache(request), repo, spec)
    body = comparison_json(comparison)
    body["url"] = compare_url(ctx.base_url, repo, comparison.base.revision.sha, comparison.head.revision.sha)
    return body


def revision_rows(
    ctx: AppContext, repo: RepoId, entry: "HistoryEntry"
) -> list[tuple[ChangeRecord, str | None, str | None]]:
    """(change, old template, new template) per change of a revision, for its page: the full chat
    templates read from the stored snapshots of the revision and its parent (loaded only when the
    revision has a chat_template change)."""
    changes = list(entry.changes)
    if not any(c.kind is Kind.CHAT_TEMPLATE for c in changes):
        return [(c, None, None) for c in changes]
    parent = entry.revision.parent
    old = _snapshot(ctx, repo, parent) if parent and ctx.store.revision(repo, parent) is not None else None
    new = _snapshot(ctx, repo, entry.revision.sha)
    with parse_once():
        return [(c, *template_texts(c, old, new)) for c in changes]
