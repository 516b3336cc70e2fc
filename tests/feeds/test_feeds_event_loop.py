"""No database work on the event loop: every route is a plain `def` (run in the thread pool) but
the bounded-body readers (JSON, and /plan's form) and `/healthz` (its probe in a thread of its own),
and `/healthz` answers while slow requests hold the pool's threads."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi.routing import APIRoute

from hubwatch.feeds import routes as routes_pkg
from hubwatch.feeds.app import create_app
from hubwatch.feeds.context import json_body
from hubwatch.feeds.routes.plan import form_body  # reads the body only (context.read_form)
from hubwatch.domain.records import RepoId
from hubwatch.settings import Settings
from hubwatch.domain.clock import system_clock
from hubwatch.storage import Store
from hubwatch.storage.revisions.store import Revisions

__all__: list[str] = []


def test_no_route_is_a_coroutine() -> None:
    modules = [importlib.import_module(f"hubwatch.feeds.routes.{m.name}") for m in pkgutil.iter_modules(routes_pkg.__path__)]
    routes = [r for module in modules if hasattr(module, "router") for r in module.router.routes if isinstance(r, APIRoute)]
    assert len(routes) > 20
    async_routes = [r.path for r in routes if inspect.iscoroutinefunction(r.endpoint)]
    # an async route would run its store work on the event loop; /healthz does none (its probe
    # runs in a thread of its own: ops.HealthProbe)
    assert async_routes == ["/healthz"]
    for route in routes:  # the only async dependency reads the body, and does no store work
        stack = list(route.dependant.dependencies)
        while stack:
            dep = stack.pop()
            stack.extend(dep.dependencies)
            if dep.call is not None and inspect.iscoroutinefunction(dep.call):
                assert dep.call in (json_body, form_body), (route.path, dep.call)


@pytest.mark.parametrize("threads", [12, 2])
def test_healthz_answers_while_slow_queries_run(tmp_path: Path, threads: int) -> None:
    """Through uvicorn over loopback: eight requests each stuck in the store hold threads (with 2,
    every thread of the pool), and `/healthz` still answers at once: it takes no thread of the pool,
    not even for a router's dependency."""
    release = threading.Event()

    class SlowRevisions(Revisions):
        def repos_holding(self, sha: str) -> list[RepoId]:
            release.wait(5)
            return []

    with Store.open(f"sqlite:///{tmp_path / 'hw.db'}") as store:
        store.revisions = SlowRevisions(store.engine, system_clock, None)  # as Store.open's own
        app = create_app(Settings(database_url="sqlite://", web_threads=threads), store)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 10
            while not server.started and time.monotonic() < deadline:
                time.sleep(0.02)
            assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200
            slow = [threading.Thread(target=httpx.post, args=(f"{base}/v1/query",),
                                     kwargs={"json": {"commit": "a" * 40}, "timeout": 10}) for _ in range(8)]
            for t in slow:
                t.start()
            time.sleep(0.3)  # the eight are inside the store now
            started = time.monotonic()
            answer = httpx.get(f"{base}/healthz", timeout=5)
            took = time.monotonic() - started
            assert answer.status_code == 200
            assert took < 2.0  # blocked, it would wait for the slow ones (5 s)
            release.set()
            for t in slow:
                t.join(10)
        finally:
            release.set()
            server.should_exit = True
            thread.join(10)
