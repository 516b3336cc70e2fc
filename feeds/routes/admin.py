"""Admin endpoints behind the bearer token, and the hub webhook receiver behind its secret."""

from __future__ import annotations

import hmac
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from hubwatch.feeds.context import AppContext, JsonBody, get_ctx
from hubwatch.feeds.errors import ApiError, bad_request
from hubwatch.domain.records import InvalidRepoId, RepoId

__all__ = ["router"]

router = APIRouter(tags=["admin"])
Ctx = Annotated[AppContext, Depends(get_ctx)]


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


def require_admin(request: Request, ctx: Ctx) -> None:
    """401 without a bearer token, 403 with a wrong one or when admin is disabled."""
    expected = ctx.settings.admin_token
    if not expected:
        raise ApiError(403, "forbidden", "admin endpoints are disabled: set HUBWATCH_ADMIN_TOKEN to enable them")
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(
            401, "unauthorized", "send 'Authorization: Bearer <admin token>'", {"WWW-Authenticate": "Bearer"}
        )
    if not _same(token.strip(), expected):
        raise ApiError(403, "forbidden", "the admin token is wrong")


@router.post("/admin/watch", dependencies=[Depends(require_admin)])
def watch(body: JsonBody, ctx: Ctx) -> JSONResponse:
    if not isinstance(body, dict) or not isinstance(body.get("repo"), str):
        raise bad_request("body must be an object with 'repo': 'org/name'")
    try:
        repo = RepoId.parse(body["repo"])
    except InvalidRepoId as exc:
        raise bad_request(f"repo: {exc}") from exc
    added = ctx.store.watch(repo)
    return JSONResponse({"repo": str(repo), "added": added}, status_code=201 if added else 200)


def _hub_repo(payload: Any) -> tuple[RepoId | None, str | None]:
    """(repo, None) for a model-content event; (None, why it is ignored) otherwise; 400 if malformed."""
    if not isinstance(payload, dict):
        raise bad_request("webhook payload must be a JSON object")
    event, repo = payload.get("event"), payload.get("repo")
    if not isinstance(event, dict) or not isinstance(event.get("scope"), str):
        raise bad_request("webhook payload needs event.scope")
    if not isinstance(repo, dict) or not isinstance(repo.get("name"), str):
        raise bad_request("webhook payload needs repo.name")
    scope = event["scope"]
    if scope != "repo.content" and not scope.startswith("repo.content."):
        return None, f"event scope {scope!r} does not change repo content"
    if repo.get("type", "model") != "model":
        return None, f"repo type {repo.get('type')!r} is not a model"
    try:
        return RepoId.parse(repo["name"]), None
    except InvalidRepoId as exc:
        raise bad_request(f"repo.name: {exc}") from exc


def require_webhook_secret(request: Request, ctx: Ctx) -> None:
    """403 when the receiver is disabled or the secret is wrong, 401 without one (before the body is read)."""
    expected = ctx.settings.webhook_secret
    if not expected:
        raise ApiError(403, "forbidden", "the webhook receiver is disabled: set HUBWATCH_WEBHOOK_SECRET")
    given = request.headers.get("x-webhook-secret")
    if given is None:
        raise ApiError(401, "unauthorized", "missing X-Webhook-Secret header")
    if not _same(given, expected):
        raise ApiError(403, "forbidden", "X-Webhook-Secret does not match")


@router.post("/webhooks/hub", dependencies=[Depends(require_webhook_secret)])
def hub_webhook(payload: JsonBody, ctx: Ctx) -> JSONResponse:
    repo, ignored = _hub_repo(payload)
    if repo is None:
        return JSONResponse({"accepted": False, "reason": ignored}, status_code=202)
    if ctx.on_webhook is not None:
        ctx.on_webhook(repo)
    return JSONResponse({"accepted": True, "repo": str(repo), "queued": ctx.on_webhook is not None}, status_code=202)


# -- notification subscriptions (hubwatch notify add|list|remove over HTTP) -------------------------
def _strings(body: dict[str, Any], key: str) -> tuple[str, ...]:
    value = body.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad_request(f"'{key}' must be a list of strings")
    return tuple(value)


@router.post("/admin/subscriptions", dependencies=[Depends(require_admin)])
def add_subscription(body: JsonBody, ctx: Ctx) -> JSONResponse:
    """Subscribe `url` (an Apprise URL; https:// is a signed webhook, its secret answered once)."""
    from hubwatch.domain.records import Kind, Severity
    from hubwatch.notify.targets import BadTarget, check_target, is_webhook, new_secret
    from hubwatch.notify.views import subscription_json
    from hubwatch.storage.notify.notify import DIGESTS, SubscriptionSpec

    if not isinstance(body, dict) or not isinstance(body.get("url"), str):
        raise bad_request("body must be an object with 'url' (an Apprise URL or an https:// webhook)")
    try:
        url = check_target(body["url"])
    except BadTarget as exc:
        raise bad_request(f"url: {exc}") from exc
    repos = _strings(body, "repos")
    for repo in repos:
        try:
            RepoId.parse(repo)
        except InvalidRepoId as exc:
            raise bad_request(f"repos: {exc}") from exc
    kinds = _strings(body, "kinds")
    known = {k.value for k in Kind}
    if unknown := [k for k in kinds if k not in known]:
        raise bad_request(f"kinds: unknown {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    severity, digest = body.get("min_severity"), body.get("digest")
    if severity is not None and severity not in {s.value for s in Severity}:
        raise bad_request("min_severity must be one of critical, high, medium, low, info")
    if digest is not None and digest not in DIGESTS:
        raise bad_request(f"digest must be one of {', '.join(DIGESTS)}")
    secret = new_secret() if is_webhook(url) else None
    spec = SubscriptionSpec(url=url, secret=secret, repos=repos, orgs=_strings(body, "orgs"), kinds=kinds,
                            min_severity=Severity(severity) if severity else None, digest=digest)  # fmt: skip
    sub = ctx.store.notify(ctx.clock).add(spec)
    return JSONResponse({**subscription_json(sub), "secret": secret}, status_code=201)


@router.get("/admin/subscriptions", dependencies=[Depends(require_admin)])
def list_subscriptions(ctx: Ctx) -> JSONResponse:
    from hubwatch.notify.views import subscription_json
    notes = ctx.store.notify(ctx.clock)
    counts = notes.counts().by_subscription
    return JSONResponse([{**subscription_json(s), "messages": counts.get(s.id, {})} for s in notes.subscriptions()])


@router.delete("/admin/subscriptions/{sub_id}", dependencies=[Depends(require_admin)])
def remove_subscription(sub_id: int, ctx: Ctx) -> JSONResponse:
    if not ctx.store.notify(ctx.clock).remove(sub_id):
        raise ApiError(404, "not_found", f"no subscription {sub_id}")
    return JSONResponse({"id": sub_id, "removed": True})
