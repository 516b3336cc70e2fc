"""Feed routes: per model, per org and global; Atom, RSS and JSON Feed; filters; conditional GET."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response

from hubwatch.feeds.builders.feeds import (
    FeedMeta,
    atom_bytes,
    feed_entries,
    json_feed,
    merge_newest_first,
    rename_entries,
    restore_entries,
    rewrite_entries,
    rss_bytes,
)
from hubwatch.domain.records import Kind, Severity
from hubwatch.feeds.context import AppContext, get_ctx, org_from_path, repo_from_path
from hubwatch.feeds.errors import not_found
from hubwatch.feeds.conditional import cached_response
from hubwatch.feeds.routes.common import parse_kinds, parse_severity, require_known
from hubwatch.feeds.text import page_path

__all__ = ["router"]

router = APIRouter(tags=["feeds"])

_MEDIA = {
    "atom": "application/atom+xml; charset=utf-8",
    "rss": "application/rss+xml; charset=utf-8",
    "json": "application/feed+json; charset=utf-8",
}

Ctx = Annotated[AppContext, Depends(get_ctx)]
KindQuery = Annotated[list[str], Query(alias="kind")]


def _render(
    request: Request,
    ctx: AppContext,
    fmt: str,
    scope: str,
    tag: str,
    title: str,
    home_path: str,
    query: dict[str, Any],
) -> Response:
    if fmt not in _MEDIA:
        raise not_found(f"no feed format {fmt!r}: use .atom, .rss or .json")
    kinds = parse_kinds(query.pop("kind"))
    severity = parse_severity(query.pop("min_severity"))
    items = ctx.store.repos.recent_changes(ctx.settings.feed_limit, kinds=kinds, min_severity=severity, **query)
    base = ctx.base_url
    filters = "&".join(
        [f"kind={k.value}" for k in kinds or []] + ([f"min_severity={severity.value}"] if severity else [])
    )
    subtitle = f"Upstream changes to {scope} seen by hubwatch" + (f" ({filters})" if filters else "")
    meta = FeedMeta(
        id=f"tag:hubwatch,2025:feeds/{tag}" + (f"?{filters}" if filters else ""),
        title=title,
        subtitle=subtitle,
        self_url=f"{base}{request.url.path}" + (f"?{filters}" if filters else ""),
        home_url=f"{base}{home_path}",
    )
    entries = feed_entries(items, base)
    # Force-pushes, restores and renames are `files`/medium changes with no revision of their own: merged in by time.
    if (kinds is None or Kind.FILES in kinds) and (severity is None or severity.rank <= Severity.MEDIUM.rank):
        limit = ctx.settings.feed_limit
        rewrites = rewrite_entries(ctx.store.revisions.recent_rewrites(limit, **query), base)
        restores = restore_entries(ctx.store.revisions.recent_restores(limit, **query), base)
        renames = rename_entries(ctx.store.repos.recent_renames(limit, **query), base)
        entries = merge_newest_first(entries, rewrites, restores, renames)[:limit]
    if fmt == "atom":
        body = atom_bytes(meta, entries)
    elif fmt == "rss":
        body = rss_bytes(meta, entries)
    else:
        body = json.dumps(json_feed(meta, entries), ensure_ascii=False, indent=2).encode()
    last = entries[0].updated if entries else None
    return cached_response(request, body, _MEDIA[fmt], last)


@router.get("/feed.{fmt}")
def global_feed(
    request: Request, fmt: str, ctx: Ctx, kind: KindQuery = [], min_severity: str | None = None
) -> Response:
    query: dict[str, Any] = {"kind": kind, "min_severity": min_severity}
    # The tag is an IRI: no spaces (it once was `feeds/all models`, which strict Atom readers reject).
    return _render(request, ctx, fmt, "all models", "all", "hubwatch: all watched models", "/", query)


@router.get("/orgs/{org}/feed.{fmt}")
def org_feed(
    request: Request, org: str, fmt: str, ctx: Ctx, kind: KindQuery = [], min_severity: str | None = None
) -> Response:
    org = org_from_path(org)
    query: dict[str, Any] = {"kind": kind, "min_severity": min_severity, "org": org}
    scope = f"orgs/{org}"
    return _render(request, ctx, fmt, scope, scope, f"hubwatch: {org}", f"/{scope}", query)


@router.get("/models/{org}/{name}/feed.{fmt}")
@router.get("/datasets/{org}/{name}/feed.{fmt}")
def model_feed(
    request: Request,
    org: str,
    name: str,
    fmt: str,
    ctx: Ctx,
    kind: KindQuery = [],
    min_severity: str | None = None,
) -> Response:
    repo = repo_from_path(org, name, request)
    require_known(ctx.store, repo)
    query: dict[str, Any] = {"kind": kind, "min_severity": min_severity, "repo": repo}
    scope = page_path(repo)[1:]  # models/org/name or datasets/org/name: the feed's tag
    return _render(request, ctx, fmt, scope, scope, f"hubwatch: {repo}", page_path(repo), query)
