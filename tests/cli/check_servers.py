"""A real hubwatch web app for `hubwatch check --server` tests: served by uvicorn on a free loopback port."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

__all__ = ["web_app"]


@pytest.fixture
def web_app(advised_store_url: str) -> Iterator[str]:
    """The real web app over the advised store (SQLite; PostgreSQL too when configured), on a free port."""
    import uvicorn

    from hubwatch.feeds import create_app
    from hubwatch.settings import Settings
    from hubwatch.storage import Store

    store = Store.open(advised_store_url)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(Settings(), store), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        store.close()
