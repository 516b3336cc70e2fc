"""Assembles the emulator's ASGI app: routes, the hub's error shape everywhere, fault injection."""

from __future__ import annotations

import asyncio

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from hubwatch.hubsim import api, chaos, control, files, modes, names
from hubwatch.hubsim.responses import error_response, sim_error_response
from hubwatch.hubsim.state import Moved, SimError, SimState

__all__ = ["create_app"]


class FaultMiddleware:
    """Delays, rate-limits or fails requests per the live FaultConfig (never the `/_sim` routes)."""

    def __init__(self, app: ASGIApp, state: SimState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/_sim"):
            await self.app(scope, receive, send)
            return
        modes.count(self.state)
        with modes.in_flight(self.state):
            await self._answer(scope, receive, send)

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        verdict = self.state.faults.next_request(scope["path"])
        if verdict.delay_s:
            await asyncio.sleep(verdict.delay_s)
        if verdict.status == 429:
            wait = verdict.retry_after or 0
            bucket = "api" if scope["path"].startswith("/api/") else "resolvers"
            response: Response = error_response(
                429,
                "RateLimited",
                "You have been rate-limited; you can retry this action later.",
                {
                    "Retry-After": str(wait),
                    "RateLimit": f'"{bucket}";r=0;t={wait}',
                    "RateLimit-Policy": f'"fixed window";"{bucket}";q=500;w=300',
                },
            )
            await response(scope, receive, send)
            return
        if verdict.status is not None:
            response = error_response(verdict.status, "ServerError", "hubsim: injected server error")
            await response(scope, receive, send)
            return
        if verdict.chaos is not None:
            await chaos.serve(verdict.chaos, self.state, self.app, scope, receive, send)
            return
        await modes.serve(self.state, self.app, scope, receive, send)


async def _sim_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SimError)
    if isinstance(exc, Moved):
        return names.moved_response(request, exc)
    return sim_error_response(exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = "NotFound" if exc.status_code == 404 else "BadRequest"
    return error_response(exc.status_code, code, f"{exc.detail}: {request.method} {request.url.path}")


async def _crash(request: Request, exc: Exception) -> Response:
    return error_response(500, "ServerError", f"hubsim failed: {type(exc).__name__}: {exc}")


def create_app(state: SimState) -> ASGIApp:
    """The emulator app over `state` (routes read it from `app.state.sim`)."""
    routes = [
        Route("/api/models", api.list_models, methods=["GET"]),
        Route("/api/models/{rest:path}", api.repo_api, methods=["GET", "POST"]),
        Route("/api/datasets", api.list_datasets, methods=["GET"]),
        Route("/api/datasets/{rest:path}", api.repo_api, methods=["GET", "POST"]),
        Route("/_sim/state", control.sim_state, methods=["GET"]),
        Route("/_sim/reset", control.reset, methods=["POST"]),
        Route("/_sim/faults", control.faults, methods=["GET", "POST"]),
        *(
            Route(f"/_sim{prefix}/{{org}}/{{name}}/{action}", handler, methods=["POST"])
            for prefix in ("/datasets", "")
            for action, handler in (
                ("advance", control.advance), ("rewind", control.rewind), ("squash", control.squash),
                ("rename", names.rename), ("refs", names.set_ref), ("convert", control.convert),
            )
        ),
        Route("/datasets/{org}/{name}/resolve/{rest:path}", files.resolve_file, methods=["GET", "HEAD"]),
        Route("/datasets/{org}/{name}/raw/{rest:path}", files.resolve_file, methods=["GET", "HEAD"]),
        Route("/{org}/{name}/resolve/{rest:path}", files.resolve_file, methods=["GET", "HEAD"]),
        Route("/{org}/{name}/raw/{rest:path}", files.resolve_file, methods=["GET", "HEAD"]),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={SimError: _sim_error, HTTPException: _http_error, Exception: _crash},
    )
    app.state.sim = state
    return FaultMiddleware(app, state)
