"""Identical reads in flight at once share one answer (request coalescing).

A page that many people open at the same moment (a model whose advisory was just linked in a chat)
is rendered once per wave of requests rather than once per request: while a `GET` is being answered,
the same `GET` arriving on the same process waits for that answer and gets a copy of it. What is
"the same" is everything that can change an answer — path, query string, the scheme and host, and
the request's headers except those no route reads (the user agent, referer, connection and fetch
metadata) — so a conditional request (`If-None-Match`) only shares with another holding the same tag.

What is never shared: a request carrying `Authorization` or a cookie, a path under `/admin`,
an answer that sets a cookie, a server error (each waiting request then runs on its own), and an
answer larger than `max_body` bytes. A request that writes (any method but `GET`/`HEAD`) passing
through the process starts a new generation: a read arriving after it never joins a render begun
before it, so a client that watches a repo and then opens its page sees its own write.

A shared answer is at most as old as the render in flight when the request arrived (one page's
time, milliseconds), and nothing is kept once that render is done: this is not a cache.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CoalesceReads", "Tally"]

# Headers that no route reads: two requests differing only in these get the same answer.
_IGNORED = frozenset({
    b"user-agent", b"referer", b"connection", b"keep-alive", b"dnt", b"priority",
    b"upgrade-insecure-requests", b"cache-control", b"pragma", b"te",
})
_IGNORED_PREFIXES = (b"sec-fetch-", b"sec-ch-")
_PRIVATE = frozenset({b"authorization", b"cookie", b"proxy-authorization"})

Key = tuple[object, ...]


@dataclass
class Tally:
    """What this process's coalescing did (`/metrics`): answers run for a request that others could
    join, and answers copied from such a run."""

    led: int = 0
    shared: int = 0


@dataclass
class _Flight:
    """One answer being computed; its messages once done (None: not shareable, run on your own)."""

    done: asyncio.Event = field(default_factory=asyncio.Event)
    messages: list[Message] | None = None
    joined: int = 0


def _copy(message: Message) -> Message:
    if message["type"] == "http.response.start":
        return {**message, "headers": list(message.get("headers", ()))}
    return dict(message)


class CoalesceReads:
    """ASGI middleware: identical anonymous `GET`s in flight at once share one run of the app."""

    def __init__(self, app: ASGIApp, max_body: int = 8 * 1024 * 1024, tally: Tally | None = None) -> None:
        self.app = app
        self.max_body = max_body
        self.tally = tally if tally is not None else Tally()
        self._flights: dict[Key, _Flight] = {}
        self._generation = 0

    def _key(self, scope: Scope) -> Key | None:
        path: str = scope["path"]
        if path.startswith("/admin"):
            return None
        kept: list[tuple[bytes, bytes]] = []
        for name, value in scope["headers"]:
            name = name.lower()
            if name in _PRIVATE:
                return None
            if name in _IGNORED or name.startswith(_IGNORED_PREFIXES):
                continue
            kept.append((name, value))
        kept.sort()
        return (self._generation, scope.get("scheme"), scope.get("root_path", ""), path,
                scope.get("query_string", b""), tuple(kept))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] != "GET":
            if scope["method"] != "HEAD":
                self._generation += 1  # a write: later reads never join a render begun before it
            await self.app(scope, receive, send)
            return
        key = self._key(scope)
        if key is None:
            await self.app(scope, receive, send)
            return
        flight = self._flights.get(key)
        if flight is not None:
            flight.joined += 1
            await flight.done.wait()
            if flight.messages is not None:
                self.tally.shared += 1
                for message in flight.messages:
                    await send(_copy(message))  # the layers outside may edit a start message's headers
                return
            await self.app(scope, receive, send)  # the leader's answer could not be shared
            return
        await self._lead(key, scope, receive, send)

    async def _lead(self, key: Key, scope: Scope, receive: Receive, send: Send) -> None:
        flight = self._flights[key] = _Flight()
        self.tally.led += 1
        recorded: list[Message] | None = []
        size = 0

        async def recording(message: Message) -> None:
            nonlocal recorded, size
            if recorded is not None:
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                    if status >= 500 or any(k.lower() == b"set-cookie" for k, _ in message.get("headers", ())):
                        recorded = None
                elif message["type"] == "http.response.body":
                    size += len(message.get("body", b""))
                    if size > self.max_body:
                        recorded = None
                if recorded is not None:
                    recorded.append(_copy(message))
            await send(message)

        complete = False
        try:
            await self.app(scope, receive, recording)
            complete = recorded is not None and bool(recorded) and not recorded[-1].get("more_body", False)
        finally:
            del self._flights[key]  # a request arriving from now on starts its own run
            flight.messages = recorded if complete else None
            flight.done.set()
