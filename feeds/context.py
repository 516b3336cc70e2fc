"""What every route needs (settings, store, webhook callback, templates, clock), held on `app.state`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Request
from fastapi.templating import Jinja2Templates

from hubwatch.feeds.errors import bad_request, not_found
from hubwatch.settings import Settings
from hubwatch.domain.clock import Clock, system_clock
from hubwatch.domain.records import InvalidRepoId, RepoId, RepoType

if TYPE_CHECKING:
    from hubwatch.storage import Store

__all__ = ["FORM_TYPE", "AppContext", "JsonBody", "get_ctx", "json_body", "org_from_path", "read_form", "read_json",
           "repo_from_path"]


@dataclass(frozen=True)
class AppContext:
    settings: Settings
    store: "Store"
    on_webhook: Callable[[RepoId], None] | None
    templates: Jinja2Templates
    clock: Clock = system_clock  # "now" for ages the app reports (the one the tracker and store use)

    @property
    def base_url(self) -> str:
        return self.settings.public_url.rstrip("/")


def get_ctx(request: Request) -> AppContext:
    """The app's context (a FastAPI dependency)."""
    ctx = request.app.state.hubwatch
    assert isinstance(ctx, AppContext)
    return ctx


def repo_from_path(org: str, name: str, request: Request | None = None) -> RepoId:
    """The repo named by a URL's `{org}/{name}`, or a 404 in the app's error shape: a dataset when
    the route that matched is one of the `…/datasets/{org}/{name}…` twins of a model route (`request` given),
    else a model. The two are separate repos, whatever their `org/name`."""
    route = request.scope.get("route") if request is not None else None
    path = getattr(route, "path", "")
    dataset = isinstance(path, str) and "/datasets/{org}/{name}" in path
    try:
        return RepoId.parse(f"{org}/{name}", RepoType.DATASET if dataset else RepoType.MODEL)
    except InvalidRepoId as exc:
        raise not_found(str(exc)) from exc


def org_from_path(org: str) -> str:
    """The organisation named by a URL's `{org}` (spelled as in a repo id), or a 404."""
    try:
        return RepoId.parse(f"{org}/x").org
    except InvalidRepoId as exc:
        raise not_found(f"{org!r} is not an organisation name") from exc


async def read_json(request: Request, max_bytes: int = 1 << 20) -> Any:
    """The request body parsed as JSON (size and nesting bounded), or a 400 saying why it is not."""
    from hubwatch.domain.remote_data import load_remote_json

    body = bytearray()
    async for chunk in request.stream():  # stop reading at the limit, never buffer more
        body += chunk
        if len(body) > max_bytes:
            raise bad_request(f"request body is larger than {max_bytes} bytes")
    if not body:
        raise bad_request("request body is empty: expected a JSON object")
    try:
        return load_remote_json(bytes(body), max_bytes=max_bytes)
    except ValueError as exc:  # not JSON, not UTF-8, or nested too deep
        raise bad_request(f"request body is not valid JSON: {exc}") from exc


async def json_body(request: Request) -> Any:
    """The bounded, parsed JSON body (a FastAPI dependency): read on the event loop, which awaits the
    body, so the route using it can be a plain `def` whose store work runs in the thread pool."""
    return await read_json(request)


JsonBody = Annotated[Any, Depends(json_body)]

FORM_TYPE = "application/x-www-form-urlencoded"


async def read_form(request: Request, max_bytes: int) -> dict[str, str]:
    """A plain HTML form's URL-encoded body, read up to `max_bytes` (413 beyond, 415 for another type)."""
    from urllib.parse import parse_qsl

    from hubwatch.feeds.errors import ApiError

    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != FORM_TYPE:
        raise ApiError(415, "unsupported_media_type", f"send the form as {FORM_TYPE} (a plain HTML form), got "
                       f"{kind or 'no content type'}")
    body = bytearray()
    async for chunk in request.stream():  # stop reading at the limit, never buffer more
        body += chunk
        if len(body) > max_bytes:
            raise ApiError(413, "too_large", f"the form is larger than {max_bytes} bytes")
    try:
        pairs = parse_qsl(body.decode("ascii", errors="replace"), keep_blank_values=True, max_num_fields=64,
                          encoding="utf-8", errors="replace")
    except ValueError as exc:  # more fields than any real form
        raise bad_request(f"the form is malformed: {exc}") from exc
    return dict(pairs)
