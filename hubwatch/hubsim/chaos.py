"""Transient faults for `FaultConfig.chaos_rate`: one request answered the way a flaky hub or proxy would.

Each kind is transient — the same request asked again is answered normally (unless drawn again) —
so a client that retries or resumes must end with exactly what a fault-free run stores:

- `5xx`: 500, 502, 503 or 504 in the hub's JSON error shape;
- `429_retry_after`: 429 with `Retry-After: 1` (no `RateLimit` header: the window mode is `ratelimit_quota`);
- `429_bare`: 429 with neither header;
- `reset`: the connection is dropped after the headers;
- `truncated`: half the body is sent, then the connection is dropped (Content-Length kept);
- `html`: a 502 whose body is a proxy's HTML page;
- `slow`: the body sent in eight pieces over about 0.4 s.
"""

from __future__ import annotations

import asyncio

from starlette.responses import HTMLResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hubwatch.hubsim import modes
from hubwatch.hubsim.responses import error_response
from hubwatch.hubsim.state import SimState

__all__ = ["KINDS", "kind_of", "serve"]

KINDS = ("5xx", "429_retry_after", "429_bare", "reset", "truncated", "html", "slow")

_PROXY_PAGE = ("<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1>"
               "</center><hr><center>cloudfront</center></body></html>")


def kind_of(draw: float) -> str:
    """The fault a draw in [0, 1) picks (evenly among `KINDS`)."""
    return KINDS[min(len(KINDS) - 1, int(draw * len(KINDS)))]


def _refusal(kind: str, draw: float) -> Response | None:
    if kind == "5xx":
        status = (500, 502, 503, 504)[int(draw * 1000) % 4]
        return error_response(status, "ServerError", "hubsim: injected transient server error")
    if kind == "429_retry_after":
        return error_response(429, "RateLimited", "You have been rate-limited; you can retry this action later.",
                              {"Retry-After": "1"})  # fmt: skip
    if kind == "429_bare":
        return error_response(429, "RateLimited", "You have been rate-limited; you can retry this action later.")
    if kind == "html":
        return HTMLResponse(_PROXY_PAGE, status_code=502)
    return None


async def serve(draw: float, state: SimState, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer one request with the transient fault `draw` picks."""
    kind = kind_of(draw)
    refusal = _refusal(kind, draw)
    if refusal is not None:
        await refusal(scope, receive, send)
        return
    parts: list[bytes] = []
    start: Message | None = None

    async def collect(message: Message) -> None:
        nonlocal start
        if message["type"] == "http.response.start":
            start = message
        elif message["type"] == "http.response.body":
            parts.append(message.get("body", b""))

    await modes.serve(state, app, scope, receive, collect)
    if start is None:
        return
    body = b"".join(parts)
    await send(start)
    if kind == "reset":
        raise ConnectionResetError("hubsim: connection dropped (chaos)")
    if kind == "truncated" and body:
        await send({"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True})
        raise ConnectionResetError("hubsim: body cut off (chaos)")
    step = max(1, -(-len(body) // 8))
    for i in range(0, len(body), step):  # slow (and a truncated empty body): pieces with pauses
        await send({"type": "http.response.body", "body": body[i : i + step], "more_body": True})
        await asyncio.sleep(0.05)
    await send({"type": "http.response.body", "body": b"", "more_body": False})
