"""`sent`, the fixture that records what huggingface_hub really sends, for the tracker's tests: a test
module imports it (`from hub_requests import sent  # noqa: F401  (the fixture)`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def sent() -> Iterator[list[str]]:
    """`METHOD path` (no query) of every request huggingface_hub sends, seen through its client
    factory hook: what the client really sent, not hubwatch's own counting."""
    import httpx2
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils._http import default_client_factory, hf_request_event_hook

    seen: list[str] = []

    def record(request: httpx2.Request) -> None:
        seen.append(f"{request.method} {request.url.path}")

    set_client_factory(lambda: httpx2.Client(event_hooks={"request": [hf_request_event_hook, record]},
                                             follow_redirects=True, timeout=None))  # fmt: skip
    try:
        yield seen
    finally:
        set_client_factory(default_client_factory)
