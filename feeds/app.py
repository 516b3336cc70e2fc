"""The app factory: `create_app(settings, store, on_webhook=…, clock=…)` wires the routers; builds nothing at import."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hubwatch import __version__
from hubwatch.feeds.coalesce import CoalesceReads, Tally
from hubwatch.feeds.context import AppContext
from hubwatch.feeds.errors import install_error_handlers
from hubwatch.feeds.redirects import canonical_redirect, install_redirects
from hubwatch.feeds.routes import admin, api, badges, compare, derivatives, feeds, ops, osv, pages, plan
from hubwatch.feeds.routes.ops import API_HEADER, API_VERSION
from hubwatch.feeds.templating import make_templates
from hubwatch.settings import Settings
from hubwatch.domain.clock import Clock, system_clock
from hubwatch.domain.records import RepoId

if TYPE_CHECKING:
    from hubwatch.storage import Store

__all__ = ["HeadAsGet", "SecurityHeaders", "create_app"]

STATIC = Path(__file__).parent / "static"


# Pages embed hostile remote text (escaped); the policy is defence in depth: no script at all, no
# framing (clickjacking), and forms (plain GET/POST, no JavaScript) only back to this app.
_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)


_API = str(API_VERSION)


class SecurityHeaders:
    """`X-Content-Type-Options: nosniff` and `X-Hubwatch-API: 1` (the JSON API's version: a client
    tells a hubwatch answer, a 404 included, from a proxy's or another server's) on every answer; the CSP and `Referrer-Policy: no-referrer`
    on HTML ones (headers a route set itself are kept). Plain ASGI: it edits the response's start
    message in passing, with no task and body stream per request as an `http` middleware has (fewer
    turns of the event loop for every answer, `/healthz` included)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault(API_HEADER, _API)
                if headers.get("content-type", "").startswith("text/html"):
                    headers.setdefault("Content-Security-Policy", _CSP)
                    headers.setdefault("Referrer-Policy", "no-referrer")
            await send(message)

        await self.app(scope, receive, with_headers)


class HeadAsGet:
    """`HEAD` on every `GET` route (pages, feeds, badges, JSON API, OSV): the request is answered as
    the `GET` it mirrors, with the same status and headers (Content-Length and ETag included) and no
    body. A path with no `GET` still answers 405. Plain ASGI, so streamed bodies are dropped too."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] != "http.response.body":
                await send(message)
            elif not message.get("more_body", False):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        await self.app({**scope, "method": "GET"}, receive, headers_only)


def _bounded_threads(threads: int) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """A lifespan that bounds the thread pool the sync routes (all store work) run in."""

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        import anyio.to_thread

        anyio.to_thread.current_default_thread_limiter().total_tokens = threads
        yield

    return lifespan


def create_app(
    settings: Settings,
    store: "Store",
    *,
    on_webhook: Callable[[RepoId], None] | None = None,
    clock: Clock = system_clock,
) -> FastAPI:
    """The web app over `store` (read-only, except `POST /admin/watch`).

    `on_webhook(repo)` is called when the hub's webhook reports new content for a model repo
    (the tracker wires it to an immediate poll). `clock` is "now" for the ages it reports
    (`/metrics`' last poll age).
    """
    app = FastAPI(
        title="hubwatch",
        version=__version__,
        description="Changes to Hugging Face model repos as feeds, OSV advisories, badges and pages.",
        docs_url=None,  # Swagger UI loads from a CDN; the schema is served as JSON instead
        redoc_url=None,
        openapi_url="/api/openapi.json",
        lifespan=_bounded_threads(settings.web_threads),
    )
    app.state.hubwatch = AppContext(settings, store, on_webhook, make_templates(settings.public_url), clock)
    install_error_handlers(app)
    app.state.coalesced = Tally()  # counted on /metrics
    app.add_middleware(CoalesceReads, tally=app.state.coalesced)  # innermost of ours: identical reads in flight share one answer
    app.add_middleware(SecurityHeaders)
    app.add_middleware(HeadAsGet)  # outermost: every layer inside sees the GET it answers
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    # Order matters where paths overlap: `/models/{org}/{name}.md` before `/models/{org}/{name}`.
    install_redirects(app)
    # Operations name no repo, and take no dependency: FastAPI runs a plain-function dependency in the
    # thread pool, and `/healthz` must answer while deep requests hold every thread of it.
    app.include_router(ops.router)
    for module in (osv, api, badges, admin, feeds, plan, compare, derivatives, pages):
        # An alias or another spelling of a repo id in the path answers 308 to the canonical URL.
        app.include_router(module.router, dependencies=[Depends(canonical_redirect)])
    return app
