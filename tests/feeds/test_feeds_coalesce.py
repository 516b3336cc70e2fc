"""Identical reads in flight at once share one answer (feeds/coalesce.py): the model page rendered
once for eight simultaneous requests, and nothing shared that must not be (credentials, cookies,
writes in between, server errors, other queries or conditional tags)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send

from hubwatch.feeds.app import create_app
from hubwatch.feeds.coalesce import CoalesceReads
from hubwatch.settings import Settings
from hubwatch.domain.clock import system_clock
from hubwatch.storage import Store
from hubwatch.storage.revisions.store import Revisions
from tests.feeds.feeds_seed import LLAMA2, seed

__all__: list[str] = []

T = TypeVar("T")


def _run(scenario: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run` in a thread of its own: the suite's browser tests leave the main thread's
    event loop (Playwright's) in place, and a loop cannot be run inside another."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, scenario).result()


class _Toy:
    """An ASGI app that holds every request at `gate` and answers what `answer(scope)` says."""

    def __init__(self, answer: Callable[[Scope], tuple[int, list[tuple[bytes, bytes]], bytes]] | None = None) -> None:
        self.runs = 0
        self.gate = asyncio.Event()
        self.answer = answer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.runs += 1
        run = self.runs  # each run's answer names it
        await self.gate.wait()
        if self.answer is None:
            status, headers, body = 200, [], f"run {run} {scope['query_string']!r}".encode()
        else:
            status, headers, body = self.answer(scope)
        if status >= 500 and b"raise" in scope.get("query_string", b""):
            raise RuntimeError("route failed")
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain"), *headers]})
        await send({"type": "http.response.body", "body": body})


async def _together(toy: _Toy, requests: list[Callable[[httpx.AsyncClient], Awaitable[httpx.Response]]],
                    middleware: CoalesceReads | None = None) -> list[httpx.Response]:
    """Start every request, let them all reach the app (or wait on a flight), then open the gate."""
    app = middleware or CoalesceReads(toy)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app, raise_app_exceptions=False),
                                 base_url="http://test") as client:
        tasks = [asyncio.ensure_future(r(client)) for r in requests]
        for _ in range(50):
            await asyncio.sleep(0)
        toy.gate.set()
        return list(await asyncio.gather(*tasks))


def _get(path: str, **kwargs: Any) -> Callable[[httpx.AsyncClient], Awaitable[httpx.Response]]:
    return lambda client: client.get(path, **kwargs)


def test_identical_gets_share_one_run() -> None:
    toy = _Toy()
    mw = CoalesceReads(toy)
    answers = _run(_together(toy, [_get("/models/a/b?x=1") for _ in range(8)], mw))
    assert toy.runs == 1
    assert (mw.tally.led, mw.tally.shared) == (1, 7)
    assert {a.status_code for a in answers} == {200}
    assert {a.content for a in answers} == {b"run 1 b'x=1'"}


def test_what_is_never_shared() -> None:
    toy = _Toy()
    requests = [
        _get("/models/a/b?x=1"), _get("/models/a/b?x=2"),  # another query
        _get("/models/a/b?x=1", headers={"Authorization": "Bearer t"}),  # credentials
        _get("/models/a/b?x=1", headers={"Cookie": "s=1"}),
        _get("/models/a/b?x=1", headers={"If-None-Match": '"abc"'}),  # another conditional tag
        _get("/models/a/b?x=1", headers={"Accept": "application/json"}),  # another representation
        _get("/admin/watch"),
    ]
    answers = _run(_together(toy, requests))
    assert toy.runs == len(requests)
    assert len({a.content for a in answers}) == len(requests)


def test_headers_no_route_reads_do_not_split_a_flight() -> None:
    toy = _Toy()
    requests = [_get("/p", headers={"User-Agent": f"client {i}", "Referer": f"https://x/{i}"}) for i in range(4)]
    _run(_together(toy, requests))
    assert toy.runs == 1


def test_a_write_starts_a_new_generation() -> None:
    """A read arriving after a write never gets an answer whose render began before that write."""
    toy = _Toy()

    async def scenario() -> list[httpx.Response]:
        mw = CoalesceReads(toy)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=mw), base_url="http://test") as client:
            before = asyncio.ensure_future(client.get("/p"))
            for _ in range(20):
                await asyncio.sleep(0)
            write = asyncio.ensure_future(client.post("/admin/watch", content=b"x"))
            for _ in range(20):
                await asyncio.sleep(0)
            after = asyncio.ensure_future(client.get("/p"))
            for _ in range(20):
                await asyncio.sleep(0)
            toy.gate.set()
            return list(await asyncio.gather(before, write, after))

    first, _, last = _run(scenario())
    assert toy.runs == 3  # the read after the write ran on its own
    assert first.content != last.content


def test_server_errors_and_cookies_are_not_shared() -> None:
    for answer in ((500, [], b"boom"), (200, [(b"set-cookie", b"s=1")], b"hello")):
        toy = _Toy(lambda scope, a=answer: a)  # type: ignore[misc]
        answers = _run(_together(toy, [_get("/p") for _ in range(4)]))
        assert toy.runs == 4  # every waiting request ran on its own
        assert {r.status_code for r in answers} == {answer[0]}


def test_a_failing_leader_lets_the_others_run() -> None:
    toy = _Toy(lambda scope: (500, [], b""))
    answers = _run(_together(toy, [_get("/p?raise=1") for _ in range(3)]))
    assert toy.runs == 3
    assert {r.status_code for r in answers} == {500}


def test_head_and_get_share_and_head_gets_no_body() -> None:
    toy = _Toy()
    from hubwatch.feeds.app import HeadAsGet

    mw = CoalesceReads(toy)
    requests = [_get("/p"), lambda c: c.head("/p"), _get("/p")]
    answers = _run(_together(toy, requests, HeadAsGet(mw)))  # type: ignore[arg-type]
    assert toy.runs == 1
    assert answers[0].content == answers[2].content == b"run 1 b''"
    assert answers[1].status_code == 200 and answers[1].content == b""


def test_start_messages_are_not_edited_for_the_next_request() -> None:
    """A layer outside that adds a header edits its own copy: every answer carries it once."""
    toy = _Toy()

    def stamp(app: CoalesceReads) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
        async def outer(scope: Scope, receive: Receive, send: Send) -> None:
            async def add(message: Message) -> None:
                if message["type"] == "http.response.start":
                    message["headers"].append((b"x-stamp", b"1"))
                await send(message)
            await app(scope, receive, add)
        return outer

    answers = _run(_together(toy, [_get("/p") for _ in range(4)], stamp(CoalesceReads(toy))))  # type: ignore[arg-type]
    assert toy.runs == 1
    assert [a.headers.get_list("x-stamp") for a in answers] == [["1"]] * 4


def test_model_page_rendered_once_for_eight_requests(tmp_path: Path) -> None:
    """The real app: eight simultaneous requests for one model page read its history once and get
    the same page, byte for byte; a different page is read on its own."""
    reads: list[str] = []
    inside = threading.Event()
    release = threading.Event()

    class CountingRevisions(Revisions):
        def rewrites(self, repo: Any) -> Any:
            reads.append(str(repo))
            inside.set()
            release.wait(5)
            return super().rewrites(repo)

    with Store.open(f"sqlite:///{tmp_path / 'c.db'}") as store:
        store.revisions = CountingRevisions(store.engine, system_clock, None)  # as Store.open's own
        seed(store)
        app = create_app(Settings(database_url="sqlite://", web_threads=12), store)

        async def scenario() -> list[httpx.Response]:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
                tasks = [asyncio.ensure_future(client.get(f"/models/{LLAMA2}")) for _ in range(8)]
                while not inside.is_set():
                    await asyncio.sleep(0.01)
                for _ in range(50):
                    await asyncio.sleep(0)  # the seven others reach the flight
                release.set()
                answers = list(await asyncio.gather(*tasks))
                metrics.append((await client.get("/metrics")).text)
                return answers

        metrics: list[str] = []
        answers = _run(scenario())
    assert reads == [str(LLAMA2)]
    assert "hubwatch_web_reads_shared_total 7\n" in metrics[0]  # seven answers copied, in this process
    assert {a.status_code for a in answers} == {200}
    assert len({a.content for a in answers}) == 1
    assert all(a.headers["content-security-policy"] for a in answers)


@pytest.mark.parametrize("path", ["/healthz", "/metrics"])
def test_operations_answers_still_work(path: str, tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'o.db'}") as store:
        app = create_app(Settings(database_url="sqlite://"), store)

        async def one() -> httpx.Response:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
                return await client.get(path)

        assert _run(one()).status_code == 200
