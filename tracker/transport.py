"""hubwatch's hooks under huggingface_hub's HTTP client: its own deadlines, no retries in the library.

huggingface_hub 2.4 retries paged listings itself (`utils._pagination` → `http_backoff`: five
tries on 408/429/5xx and on timeouts, resets and protocol errors, sleeping Retry-After + 1 or
1–8 s between them) and sends listings with no timeout at all. Installed as hooks on the library's
shared client's event hooks (added to whatever client the library's factory built), hubwatch owns
that policy:

- a retryable answer (408, 429, 5xx) is raised as `HubAnswer`, and a timeout or broken body as
  `HubConnection` — neither is an httpx error, so `http_backoff` never sleeps on them;
- a request that fails before any answer (connection refused or reset, DNS, connect or read
  timeout) is raised as `HubConnection` too, by a transport wrapped around the client's own: no
  hook sees those, and the library would retry them five times sleeping 1–8 s (23 s in all) and
  close the shared client, whose replacement the factory builds without hubwatch's hooks; that
  transport also counts every request by the status it got, or as unanswered (`requests_seen`:
  the cycle's requests by status);
- each request gets the hub timeout as a whole: connect/read timeouts of at most what is left,
  and the body is cut off once the deadline passes, however slowly it trickles in;
- the `RateLimit` header of every answer is noted in the caller's `RateGate` when it says nothing
  is left, so the next call is deferred instead of sent into a 429.

Requests made outside `limits(...)` (no hubwatch call in progress) pass through untouched.

`install()` also turns off the library's telemetry: with it on, building the first request's
headers fetches `/api/agent-harnesses` from the library's default endpoint (huggingface.co),
whatever endpoint hubwatch was given, and hubwatch makes no request to any host but its hub.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from hubwatch.tracker import requests_seen

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "HubAnswer",
    "HubConnection",
    "Limits",
    "RateGate",
    "install",
    "limits",
    "origin_of",
]

RETRYABLE = frozenset({408, 429, 500, 502, 503, 504})
_ERROR_BODY_BYTES = 64 * 1024


@dataclass(frozen=True)
class Limits:
    """The bounds of the hub call in progress: per request, and the monotonic deadline of the poll."""

    timeout_s: float
    deadline: float | None = None  # time.monotonic() value; None: no poll deadline
    gate: RateGate | None = None  # where a `RateLimit` header with nothing remaining is noted

    def request_deadline(self, start: float) -> float:
        end = start + self.timeout_s
        return min(end, self.deadline) if self.deadline is not None else end


_LIMITS: contextvars.ContextVar[Limits | None] = contextvars.ContextVar("hubwatch_hub_limits", default=None)


@contextmanager
def limits(value: Limits) -> Iterator[None]:
    """Bound every request made by the library inside the block (this thread and context)."""
    token = _LIMITS.set(value)
    try:
        yield
    finally:
        _LIMITS.reset(token)


class HubAnswer(Exception):
    """The hub answered a status huggingface_hub would retry (408, 429, 5xx); raised instead."""

    def __init__(self, status: int, headers: dict[str, str], message: str) -> None:
        super().__init__(f"HTTP {status}: {message}" if message else f"HTTP {status}")
        self.status = status
        self.headers = headers
        self.message = message


class HubConnection(Exception):
    """The request did not complete: timed out, past its deadline, or the connection broke."""

    def __init__(self, message: str, *, timeout: bool, truncated: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout
        self.truncated = truncated


class RateGate:
    """Per hub origin, until when (monotonic) its `RateLimit` header said no request is left.

    One per hub client (`HubGuard`): the window is the hub's account quota for its token.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed_until: dict[str, float] = {}

    def close(self, origin: str, seconds: float) -> None:
        with self._lock:
            until = time.monotonic() + max(0.0, seconds)
            self._closed_until[origin] = max(until, self._closed_until.get(origin, 0.0))

    def closed_until(self, origin: str) -> float:
        """The monotonic time `origin` is closed until (0.0: never closed)."""
        with self._lock:
            return self._closed_until.get(origin, 0.0)

    def wait_s(self, origin: str) -> float:
        """Seconds until `origin` may be called again (0: now)."""
        with self._lock:
            until = self._closed_until.get(origin)
        return max(0.0, until - time.monotonic()) if until is not None else 0.0


def origin_of(url: object) -> str:
    """`scheme://host:port` of a URL (what the rate gate is keyed by)."""
    import httpx2

    parsed = httpx2.URL(str(url))
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return f"{parsed.scheme}://{parsed.host}:{port}"


def _observe_rate_limit(gate: RateGate | None, request: httpx2.Request, response: httpx2.Response) -> None:
    from huggingface_hub.utils import parse_ratelimit_headers  # type: ignore[attr-defined]  # lazy module

    info = parse_ratelimit_headers(response.headers)
    if gate is not None and info is not None and info.remaining <= 0:
        gate.close(origin_of(request.url), float(info.reset_in_seconds))


def _checked(stream: httpx2.SyncByteStream, deadline: float) -> Iterator[bytes]:
    import httpx2

    try:
        for chunk in stream:
            if time.monotonic() > deadline:
                raise HubConnection("the hub's answer did not arrive in time (body still arriving)", timeout=True)
            yield chunk
    except httpx2.TimeoutException as exc:
        raise HubConnection(f"the hub did not answer in time: {exc}", timeout=True) from exc
    except httpx2.RemoteProtocolError as exc:
        raise HubConnection(f"truncated or malformed response: {exc}", timeout=False, truncated=True) from exc
    except httpx2.TransportError as exc:
        raise HubConnection(f"the connection to the hub broke: {exc}", timeout=False, truncated=True) from exc


def _on_request(request: httpx2.Request) -> None:
    bounds = _LIMITS.get()
    if bounds is None:
        return
    now = time.monotonic()
    deadline = bounds.request_deadline(now)
    left = deadline - now
    if left <= 0:
        raise HubConnection("the poll's deadline passed before this request", timeout=True)
    request.extensions["timeout"] = {"connect": left, "read": left, "write": left, "pool": left}
    request.extensions["hubwatch_deadline"] = deadline


def _on_response(response: httpx2.Response) -> None:
    import httpx2

    bounds = _LIMITS.get()
    deadline = response.request.extensions.get("hubwatch_deadline")
    if bounds is None or not isinstance(deadline, float):
        return
    _observe_rate_limit(bounds.gate, response.request, response)
    inner = response.stream
    assert isinstance(inner, httpx2.SyncByteStream)
    response.stream = _stream_type()(inner, deadline)
    if response.status_code in RETRYABLE:
        body = response.read()[:_ERROR_BODY_BYTES]
        response.close()
        message = response.headers.get("x-error-message") or body.decode("utf-8", "replace")[:200]
        raise HubAnswer(response.status_code, {k.lower(): v for k, v in response.headers.items()}, message)


@cache
def _stream_type() -> Callable[[httpx2.SyncByteStream, float], httpx2.SyncByteStream]:
    import httpx2

    class Stream(httpx2.SyncByteStream):
        """The body, cut off at the request's deadline; errors raised as HubConnection."""

        def __init__(self, inner: httpx2.SyncByteStream, deadline: float) -> None:
            self._inner, self._deadline = inner, deadline

        def __iter__(self) -> Iterator[bytes]:
            yield from _checked(self._inner, self._deadline)

        def close(self) -> None:
            self._inner.close()

    return Stream


@cache
def _transport_type() -> Callable[[httpx2.BaseTransport], httpx2.BaseTransport]:
    import httpx2

    class Transport(httpx2.BaseTransport):
        """The client's transport: counts each request by its answer (`requests_seen`); inside
        `limits(...)`, a request that got no answer raises HubConnection."""

        def __init__(self, inner: httpx2.BaseTransport) -> None:
            self.inner = inner

        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            url = str(request.url)
            try:
                response = self.inner.handle_request(request)
            except httpx2.TransportError as exc:  # timeouts included
                requests_seen.record(url, requests_seen.NO_ANSWER)
                if _LIMITS.get() is None:
                    raise
                if isinstance(exc, httpx2.TimeoutException):
                    raise HubConnection(f"the hub did not answer in time: {exc}", timeout=True) from exc
                raise HubConnection(f"could not reach the hub: {exc!r}", timeout=False) from exc
            requests_seen.record(url, response.status_code)  # before any hook can raise on it
            return response

        def close(self) -> None:
            self.inner.close()

    return Transport


def _wrap_transports(session: httpx2.Client) -> None:
    """Wrap the client's transports (the default one and any mounted, e.g. proxies from the environment).

    httpx has no public way to change a built client's transport: the attributes are private, read
    here because hubwatch keeps whatever client the library's factory built (see `install`).
    """
    kind = _transport_type()
    current = session._transport  # pyright: ignore[reportPrivateUsage]
    if not isinstance(current, kind):  # type: ignore[arg-type]  # a class made at run time
        session._transport = kind(current)  # pyright: ignore[reportPrivateUsage]
    mounts = session._mounts  # pyright: ignore[reportPrivateUsage]
    for pattern, transport in list(mounts.items()):
        if transport is not None and not isinstance(transport, kind):  # type: ignore[arg-type]
            mounts[pattern] = kind(transport)


_install_lock = threading.Lock()


@cache
def _library() -> tuple[Any, Callable[[], httpx2.Client]]:
    """huggingface_hub's constants module and `get_session`, imported once (a lazy module: each
    import of a name from it goes through its `__getattr__`; `install` runs on every hub call)."""
    from huggingface_hub import constants, get_session

    return constants, get_session


def install() -> None:
    """Add hubwatch's hooks to huggingface_hub's current shared client (idempotent; cheap).

    Checked on every hub call: a client factory set by anyone else (`set_client_factory`) makes
    a new session, which gets the hooks on its first hubwatch call. Whatever client that factory
    builds, requests made inside `limits(...)` are bounded and never retried by the library.
    """
    constants, get_session = _library()
    # Read at each request's headers (`utils._headers._http_user_agent`): off, no agent-registry fetch.
    constants.HF_HUB_DISABLE_TELEMETRY = True
    session = get_session()
    hooks = session.event_hooks
    if _on_request in hooks.get("request", []):
        return
    with _install_lock:
        hooks = session.event_hooks
        if _on_request not in hooks.get("request", []):
            _wrap_transports(session)  # before the hooks: they mark the session as done
            session.event_hooks = {
                "request": [*hooks.get("request", []), _on_request],
                "response": [*hooks.get("response", []), _on_response],
            }
