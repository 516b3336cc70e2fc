"""The real hub's answers the plain emulator never gives, switched on by FaultConfig fields.

Bad tokens (401 "Invalid credentials in Authorization header"), disabled (403) and deleted (404,
and gone from the `/api/models` listing) repos, `RateLimit` windows on every answer, trickling bodies and dropped connections; applied
by `serve` around the routes (after the fault countdown in `app.FaultMiddleware`).
"""

from __future__ import annotations

import asyncio
import fnmatch
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import unquote

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hubwatch.hubsim.faults import FaultConfig
from hubwatch.hubsim.responses import error_response
from hubwatch.hubsim.state import SimState

__all__ = [
    "BAD_TOKEN", "DISABLED", "RateWindow", "concurrency", "count", "deleted", "in_flight", "repo_of", "requests_seen",
    "serve",
]

BAD_TOKEN = "Invalid credentials in Authorization header"
DISABLED = "Access to this resource is disabled."


def repo_of(path: str) -> str | None:
    """`org/name` of a repo route (`/api/models/org/name/…`, `/org/name/resolve/…`), the state's
    `datasets/org/name` of a dataset's (`/api/datasets/org/name/…`, `/datasets/org/name/resolve/…`), else None."""
    parts = [unquote(p) for p in path.strip("/").split("/")]
    if len(parts) >= 4 and parts[:2] == ["api", "models"]:
        return f"{parts[2]}/{parts[3]}"
    if len(parts) >= 4 and parts[:2] == ["api", "datasets"]:
        return f"datasets/{parts[2]}/{parts[3]}"
    if len(parts) >= 5 and parts[0] == "datasets" and parts[3] in ("resolve", "raw", "blob", "tree"):
        return f"datasets/{parts[1]}/{parts[2]}"
    if len(parts) >= 4 and parts[2] in ("resolve", "raw", "blob", "tree"):
        return f"{parts[0]}/{parts[1]}"
    return None


class RateWindow:
    """A fixed window of `quota` requests per `window_s` seconds (wall time), like the hub's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._start = time.monotonic()
        self._used = 0
        self._key: tuple[int, int] = (0, 0)

    def take(self, quota: int, window_s: int) -> tuple[int, int, bool]:
        """(remaining after this request, seconds to the window's reset, whether it is allowed)."""
        with self._lock:
            now = time.monotonic()
            if self._key != (quota, window_s) or now - self._start >= window_s:
                self._key, self._start, self._used = (quota, window_s), now, 0
            allowed = self._used < quota
            if allowed:
                self._used += 1
            reset = max(1, int(round(self._start + window_s - now)))
            return quota - self._used, reset, allowed


class _Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0
        self.in_flight = 0
        self.max_in_flight = 0


def _tally(state: SimState) -> _Tally:
    found: _Tally = state.__dict__.setdefault("_tally", _Tally())
    return found


def count(state: SimState) -> None:
    """Count one hub request (every one but the `/_sim` control routes)."""
    tally = _tally(state)
    with tally.lock:
        tally.count += 1


@contextmanager
def in_flight(state: SimState) -> Iterator[None]:
    """Around one hub request's handling: how many are being answered at once, and the most so far
    (`/_sim/state`'s `requests`): whether a client sends its requests together or one by one."""
    tally = _tally(state)
    with tally.lock:
        tally.in_flight += 1
        tally.max_in_flight = max(tally.max_in_flight, tally.in_flight)
    try:
        yield
    finally:
        with tally.lock:
            tally.in_flight -= 1


def concurrency(state: SimState, *, reset: bool = False) -> dict[str, int]:
    """`{"seen", "in_flight", "max_in_flight"}` of the hub requests; `reset` starts the maximum again."""
    tally = _tally(state)
    with tally.lock:
        out = {"seen": tally.count, "in_flight": tally.in_flight, "max_in_flight": tally.max_in_flight}
        if reset:
            tally.max_in_flight = tally.in_flight
    return out


def requests_seen(state: SimState) -> int:
    """How many hub requests (the `/_sim` control routes excepted) the emulator has received."""
    tally = _tally(state)
    with tally.lock:
        return tally.count


def _token(scope: Scope) -> str | None:
    for key, value in scope.get("headers", []):
        if key == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


def deleted(cfg: FaultConfig, repo_id: str) -> bool:
    """Whether the `deleted` mode takes this repo (its id as the emulator spells it) off the hub."""
    return bool(cfg.deleted) and fnmatch.fnmatchcase(repo_id, cfg.deleted or "")


def _refusal(state: SimState, cfg: FaultConfig, path: str, token: str | None) -> Response | None:
    wanted = cfg.invalid_token
    if wanted is not None and (wanted == "*" or (wanted == "-" and token is None) or (token is not None and token == wanted)):
        return error_response(401, None, BAD_TOKEN)
    repo = repo_of(path)
    if repo is None:
        return None
    repo = state.canonical(repo, follow=True)  # the hub matches ids case-insensitively, so do the modes
    if deleted(cfg, repo):
        return error_response(404, "RepoNotFound", f"Repository not found: {repo}")
    if cfg.disabled and fnmatch.fnmatchcase(repo, cfg.disabled):
        return error_response(403, None, DISABLED)
    return None


async def serve(state: SimState, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer one (non-control) request through the modes of the live FaultConfig."""
    cfg = state.faults.config
    path = scope["path"]
    refusal = _refusal(state, cfg, path, _token(scope))
    extra: list[tuple[bytes, bytes]] = []
    if cfg.ratelimit_quota > 0:
        window: RateWindow = state.__dict__.setdefault("_rate_window", RateWindow())
        remaining, reset, allowed = window.take(cfg.ratelimit_quota, cfg.ratelimit_window_s)
        bucket = "api" if path.startswith("/api/") else "resolvers"
        extra = [
            (b"ratelimit", f'"{bucket}";r={remaining};t={reset}'.encode()),
            (b"ratelimit-policy", f'"fixed window";"{bucket}";q={cfg.ratelimit_quota};w={cfg.ratelimit_window_s}'.encode()),
        ]
        if not allowed and refusal is None:
            refusal = error_response(429, "RateLimited", "You have been rate-limited; you can retry this action later.",
                                     {"Retry-After": str(reset)})  # fmt: skip
    if refusal is not None:
        target: ASGIApp = refusal
    else:
        target = app
    trickle = cfg.trickle is not None and fnmatch.fnmatchcase(path, cfg.trickle)
    drop = cfg.reset_rate > 0 and random.random() < cfg.reset_rate

    async def send_wrapped(message: Message) -> None:
        if message["type"] == "http.response.start" and extra:
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        if message["type"] == "http.response.body":
            if drop:
                raise ConnectionResetError("hubsim: connection dropped (reset_rate)")
            if trickle:
                body: bytes = message.get("body", b"")
                more = message.get("more_body", False)
                for i in range(len(body)):
                    if state.faults.config.trickle is None:  # switched off: send the rest at once
                        await send({"type": "http.response.body", "body": body[i:], "more_body": True})
                        break
                    await send({"type": "http.response.body", "body": body[i : i + 1], "more_body": True})
                    await asyncio.sleep(cfg.trickle_ms / 1000.0)
                await send({"type": "http.response.body", "body": b"", "more_body": more})
                return
        await send(message)

    await target(scope, receive, send_wrapped)
