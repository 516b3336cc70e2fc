"""Compare any two stored revisions of a repo: `/models/{org}/{name}/compare/BASE...HEAD` (HTML) and
`/api/v1/models/{org}/{name}/compare/BASE...HEAD` (JSON); both read the store and call the pure
builders in `builders.compare`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse

from hubwatch.diff import diff_snapshots
from hubwatch.domain.records import ChangeRecord, Kind, RepoId
from hubwatch.feeds.builders.compare import (
    BadRange,
    Comparison,
    advisory_moves,
    comparison_json,
    estimate_deltas,
    parse_range,
    stored_snapshot,
    template_texts,
)
from hubwatch.feeds.builders.standing import load_standing, relations
from hubwatch.feeds.builders.views import estimate_view, stored_estimate
from hubwatch.feeds.context import AppContext, get_ctx, repo_from_path
from hubwatch.feeds.errors import bad_request, not_found

if TYPE_CHECKING:
    from hubwatch.domain.snapshot import Snapshot
    from hubwatch.storage import HistoryEntry

__all__ = ["compare_url", "revision_rows", "router"]

router = APIRouter(tags=["pages"])
Ctx = Annotated[AppContext, Depends(get_ctx)]


def compare_url(base_url: str, repo: RepoId, base: str, head: str) -> str:
    """The compare page of `repo` from `base` to `head` (GitHub's shape, short shas)."""
    return f"{base_url.rstrip('/')}/models/{repo}/compare/{base[:12]}...{head[:12]}"


def _entry(ctx: AppContext, repo: RepoId, ref: str) -> "HistoryEntry":
    """The stored revision `ref` names (an ambiguous prefix is a 400 from the store's error)."""
    entry = ctx.store.revision(repo, ref)
    if entry is None:
        if ctx.store.head(repo) is None:
            raise not_found(f"{repo} is not watched by this hubwatch (no stored revision)")
        raise not_found(f"{repo} has no stored revision {ref!r}: see /models/{repo} for the revisions it has")
    return entry


def _snapshot(ctx: AppContext, repo: RepoId, sha: str) -> "Snapshot":
    files, contents = ctx.store.snapshot_files(repo, sha)
    return stored_snapshot(sha, files, contents)


def _compare(ctx: AppContext, repo: RepoId, spec: str) -> tuple[Comparison, "Snapshot", "Snapshot"]:
    try:
        refs = parse_range(spec)
    except BadRange as exc:
        raise bad_request(str(exc)) from exc
    base, head = _entry(ctx, repo, refs.base), _entry(ctx, repo, refs.head)
    old, new = _snapshot(ctx, repo, base.revision.sha), _snapshot(ctx, repo, head.revision.sha)
    at_base = load_standing(ctx.store, repo, base.revision.sha)
    at_head = load_standing(ctx.store, repo, head.revision.sha)
    assert at_base is not None and at_head is not None  # both revisions are stored
    resolved, introduced = advisory_moves(at_base, at_head)
    comparison = Comparison(
        repo=repo,
        base=base,
        head=head,
        changes=tuple(diff_snapshots(old, new)),
        deltas=tuple(estimate_deltas(estimate_view(stored_estimate(base)), estimate_view(stored_estimate(head)))),
        resolved=tuple(resolved),
        introduced=tuple(introduced),
    )
    return comparison, old, new


@router.get("/models/{org}/{name}/compare/{spec}", response_class=HTMLResponse)
def compare_page(request: Request, org: str, name: str, spec: str, ctx: Ctx) -> Response:
    """Every file's semantic diff from BASE to HEAD, the rendered chat-template diffs, the estimate
    deltas and the advisories a pin moving from BASE to HEAD resolves and takes on."""
    repo = repo_from_path(org, name)
    comparison, old, new = _compare(ctx, repo, spec)
    head = comparison.head.revision.sha
    hits = [a.id for a in comparison.introduced]
    context: dict[str, Any] = {
        "repo": repo,
        "cmp": comparison,
        "rows": [(c, *template_texts(c, old, new)) for c in comparison.changes],
        "resolved": relations(comparison.resolved, head, []),
        "introduced": relations(comparison.introduced, head, hits),
        "hub_url": repo.url(ctx.settings.hub_web_url),
        "json_url": f"/api/v1/models/{repo}/compare/{spec}",
    }
    return ctx.templates.TemplateResponse(request, "compare.html", context)


@router.get("/api/v1/models/{org}/{name}/compare/{spec}", tags=["api"], response_class=JSONResponse)
def compare_json(org: str, name: str, spec: str, ctx: Ctx) -> dict[str, Any]:
    """The compare page as JSON (`BASE...HEAD`: full shas or unique prefixes of 7+ characters)."""
    repo = repo_from_path(org, name)
    comparison, _, _ = _compare(ctx, repo, spec)
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
    return [(c, *template_texts(c, old, new)) for c in changes]
