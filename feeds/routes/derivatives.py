"""The derivatives page `/models/ORG/NAME/derivatives`: a base's derivatives (docs/derivatives.md) with their
relation, last change, parameters (derived and counted in the checkpoint, and the difference from
the base's) and the inherited advisories and notes each carries; its JSON twin
`/api/v1/models/ORG/NAME/derivatives`. The pages' first URLs, `…/family`, answer 308 to these (the
same query), so links and bookmarks made before the rename keep working."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

from hubwatch.advisories.inherit import INHERITED_ID_SUFFIX, is_inherited
from hubwatch.domain.records import AdvisoryRecord, RepoId, RevisionRecord
from hubwatch.domain.times import rfc3339
from hubwatch.estimator import Estimate
from hubwatch.feeds.context import AppContext, get_ctx, repo_from_path
from hubwatch.feeds.routes.common import require_known
from hubwatch.storage.derivatives.derivatives import Derivative

__all__ = ["DerivativesPageRow", "derivatives_json", "derivatives_rows", "router"]

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)
Ctx = Annotated[AppContext, Depends(get_ctx)]


@dataclass(frozen=True)
class DerivativesPageRow:
    """One checkpoint of a base or its derivatives as the page lists it."""

    repo: RepoId
    relation: str  # "base" for the base itself
    head: RevisionRecord | None
    derived: int | None
    checkpoint: int | None
    derived_delta: int | None  # against the base's
    checkpoint_delta: int | None
    inherited: tuple[AdvisoryRecord, ...]
    notes: tuple[str, ...]  # the inheritance check's info notes (a template of its own, …)


def _row(ctx: AppContext, repo: RepoId, relation: str, notes: dict[str, Any], base: tuple[int | None, int | None]) -> DerivativesPageRow:
    head = ctx.store.head(repo)
    derived = checkpoint = None
    if head is not None:
        entry = ctx.store.revision(repo, head.sha)
        estimate = Estimate.from_json(entry.estimate) if entry is not None else None
        if estimate is not None and estimate.params is not None:
            derived, checkpoint = estimate.params.derived, estimate.params.checkpoint
    # The live inherited records, found by their ids' ending: the member's other advisories are not decoded.
    inherited = tuple(r for r in ctx.store.advisories.with_id_suffix(repo, INHERITED_ID_SUFFIX) if is_inherited(r.osv))
    texts = tuple(str(n.get("note")) for k, n in sorted(notes.items())
                  if not k.startswith("_") and isinstance(n, dict) and n.get("status") == "own")  # fmt: skip
    return DerivativesPageRow(
        repo, relation, head, derived, checkpoint,
        None if derived is None or base[0] is None else derived - base[0],
        None if checkpoint is None or base[1] is None else checkpoint - base[1],
        inherited, texts,
    )  # fmt: skip


def derivatives_rows(ctx: AppContext, base: RepoId) -> list[DerivativesPageRow]:
    """The base first, then its derivatives by id."""
    members = ctx.store.derivatives(ctx.clock).members(base=base)
    first = _row(ctx, base, "base", {}, (None, None))
    rows = [first]
    for member in members:
        rows.append(_row(ctx, member.repo, member.relation, member.notes, (first.derived, first.checkpoint)))
    return rows


def _derivatives(ctx: AppContext, org: str, name: str) -> tuple[RepoId, RepoId, Derivative | None, list[DerivativesPageRow]]:
    repo = repo_from_path(org, name)
    require_known(ctx.store, repo)
    member = ctx.store.derivatives(ctx.clock).member(repo)
    base = member.base if member is not None else repo
    return repo, base, member, derivatives_rows(ctx, base)


@router.get("/models/{org}/{name}/derivatives")
def derivatives_page(request: Request, org: str, name: str, ctx: Ctx) -> Response:
    repo, base, member, rows = _derivatives(ctx, org, name)
    context: dict[str, Any] = {"repo": repo, "base": base, "member": member, "rows": rows}
    return ctx.templates.TemplateResponse(request, "derivatives.html", context)


def _inherited_json(record: AdvisoryRecord) -> dict[str, Any]:
    raw = record.osv.get("database_specific")
    ds: dict[str, Any] = raw if isinstance(raw, dict) else {}
    found = ds.get("inherited")
    inherited: dict[str, Any] = found if isinstance(found, dict) else {}
    return {
        "id": record.id,
        "summary": str(record.osv.get("summary", "")),
        "severity": ds.get("max_severity"),
        "status": "closed" if ds.get("fixed_by") else "open",
        "upstream": inherited.get("upstream"),
        "base_commit": inherited.get("base_commit"),
    }


def derivatives_json(rows: list[DerivativesPageRow], repo: RepoId, base: RepoId, member: Derivative | None) -> dict[str, Any]:
    """The derivatives page's rows as JSON (the base first)."""
    return {
        "repo": str(repo),
        "base": str(base),
        "relation": member.relation if member is not None else ("base" if len(rows) > 1 else None),
        "checkpoints": [
            {
                "repo": str(row.repo),
                "relation": row.relation,
                "head": None if row.head is None else {
                    "sha": row.head.sha, "date": rfc3339(row.head.date), "title": row.head.title,
                },
                "params": {
                    "derived": row.derived, "checkpoint": row.checkpoint,
                    "derived_delta": row.derived_delta, "checkpoint_delta": row.checkpoint_delta,
                },
                "inherited": [_inherited_json(r) for r in row.inherited],
                "notes": list(row.notes),
            }
            for row in rows
        ],
    }  # fmt: skip


@router.get("/api/v1/models/{org}/{name}/derivatives", tags=["api"], response_class=JSONResponse)
def derivatives_api(org: str, name: str, ctx: Ctx) -> dict[str, Any]:
    """The derivatives page as JSON: the base, then each watched derivative (relation, head, parameters
    and their difference from the base's, inherited advisories open or closed, notes)."""
    repo, base, member, rows = _derivatives(ctx, org, name)
    body = derivatives_json(rows, repo, base, member)
    body["url"] = f"{ctx.base_url}/models/{base}/derivatives"
    return body


@router.get("/models/{org}/{name}/family", include_in_schema=False)
@router.get("/api/v1/models/{org}/{name}/family", include_in_schema=False)
def derivatives_moved(request: Request) -> Response:
    """The derivatives pages' first URLs: 308 to the same page (and query) under `…/derivatives`."""
    location = request.url.path.removesuffix("/family") + "/derivatives"
    if request.url.query:
        location += f"?{request.url.query}"
    return RedirectResponse(location, status_code=308)
