"""Every request a poll cycle sends is counted once in its `poll_cycles` row and on /metrics, by the
status it got (2xx, a rename's 307, 404, 429 — also one that defers the repo, and inside
huggingface_hub's own paged commit listing —, 500) or as unanswered (nothing listening), through
the emulator's fault modes and the official client, on SQLite and PostgreSQL.

What the hub client really sent is seen independently of hubwatch's counting: a client factory
(huggingface_hub's `set_client_factory`) whose transport notes each request's outcome."""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from hubwatch.domain.records import RepoId
from hubwatch.feeds import create_app
from hubwatch.settings import Settings
from hubwatch.storage.ops.telemetry import CycleReport
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import Failed
from hubwatch.tracker.scheduler import PollCycle

LLAMA = RepoId.parse("meta-llama/Llama-2-7b-hf")
QWEN = RepoId.parse("Qwen/Qwen-7B")
MOVED = RepoId.parse("meta-llama/Llama-2-7b-hf-moved")
CLASSES = ("ok", "3xx", "4xx", "429", "5xx", "failed")


def _class(status: int | None) -> str:
    if status is None:
        return "failed"
    if status == 429:
        return "429"
    return "5xx" if status >= 500 else "4xx" if status >= 400 else "3xx" if status >= 300 else "ok"


@pytest.fixture
def sent() -> Iterator[list[tuple[str, int | None]]]:
    """(method path, status or None for no answer) of every request huggingface_hub sends."""
    import httpx2
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils._http import default_client_factory, hf_request_event_hook

    seen: list[tuple[str, int | None]] = []

    class Noting(httpx2.BaseTransport):
        def __init__(self) -> None:
            self.inner = httpx2.HTTPTransport()

        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            where = f"{request.method} {request.url.path}"
            try:
                response = self.inner.handle_request(request)
            except httpx2.TransportError:
                seen.append((where, None))
                raise
            seen.append((where, response.status_code))
            return response

        def close(self) -> None:
            self.inner.close()

    set_client_factory(
        lambda: httpx2.Client(event_hooks={"request": [hf_request_event_hook]}, transport=Noting(),
                              follow_redirects=True, timeout=None)
    )
    try:
        yield seen
    finally:
        set_client_factory(default_client_factory)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _row(report: CycleReport) -> dict[str, int]:
    return {"ok": report.requests_ok, "3xx": report.requests_3xx, "4xx": report.requests_4xx,
            "429": report.requests_429, "5xx": report.requests_5xx, "failed": report.requests_failed}


def test_each_cycle_counts_every_request_by_status_once(hubsim_factory: Any, store: Any,
                                                        sent: list[tuple[str, int | None]]) -> None:
    sim = hubsim_factory(at="v1")
    store.watch(LLAMA)
    store.watch(QWEN)
    now = [datetime(2030, 1, 1, tzinfo=timezone.utc)]
    totals: Counter[str] = Counter()

    def cycle(endpoint: str = sim.url) -> tuple[list[Any], dict[str, int], list[tuple[str, int | None]]]:
        """One cycle on a fresh client, a re-check interval later (every repo due for its own head)."""
        now[0] += timedelta(hours=7)
        settings = Settings(database_url="sqlite://", hub_endpoint=endpoint, poll_interval_s=60, hub_retries=0)
        del sent[:]
        poll = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="w",
                         clock=lambda: now[0])
        try:
            outcomes = poll()
        finally:
            poll.close()
        latest = store.telemetry.cycle_totals().latest
        assert latest is not None
        row = _row(latest)
        seen = Counter(_class(status) for _, status in sent)
        assert row == {c: seen[c] for c in CLASSES}, (row, sent)  # each request once, nothing else
        totals.update(row)
        return outcomes, row, list(sent)

    _, row, _ = cycle()  # the backfill: answers only
    assert row["ok"] > 3 and sum(row.values()) == row["ok"]

    # A 429 inside huggingface_hub's paged commit listing (not the head request): the repo is deferred.
    sim.advance(str(LLAMA))
    sim.set_faults(rate_limit=1, retry_after=0, rate_limit_path=f"/api/models/{LLAMA}/commits*")
    outcomes, row, seen = cycle()
    assert [(o.repo, o.deferred) for o in outcomes if isinstance(o, Failed)] == [(LLAMA, True)]
    assert row["429"] == 1 and [w for w, s in seen if s == 429][0].startswith(f"GET /api/models/{LLAMA}/commits")
    assert store.telemetry.cycle_totals().latest.rate_limited >= 1

    # 500 on every request (no retries): the listing and each repo's head.
    sim.set_faults(error_rate=1.0, error_status=500)
    _, row, seen = cycle()
    assert row["5xx"] == len(seen) == 3 and sum(row.values()) == 3, seen

    # A deleted repo: its head answers 404, once; the other repo polls on.
    sim.set_faults(deleted=str(QWEN))
    outcomes, row, _ = cycle()
    assert row["4xx"] == 1 and row["5xx"] == row["429"] == row["failed"] == 0
    assert any(isinstance(o, Failed) and o.repo == QWEN for o in outcomes)

    # A rename: the old id's 307 and the answer it leads to, each once.
    sim.set_faults()
    answer = httpx.post(f"{sim.url}/_sim/{LLAMA}/rename", json={"to": str(MOVED)})
    assert answer.status_code == 200, answer.text
    _, row, seen = cycle()
    assert row["3xx"] == sum(1 for _, s in seen if s == 307) >= 1 and row["ok"] >= 1

    # Nothing listening: every request sent is counted as unanswered (under that hub's origin).
    _, row, seen = cycle(f"http://127.0.0.1:{_free_port()}")
    assert row["failed"] == len(seen) >= 1 and sum(row.values()) == row["failed"]

    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url)
    text = TestClient(create_app(settings, store)).get("/metrics").text
    assert totals["429"] == 1 and totals["5xx"] == 3 and totals["4xx"] == 1
    for label in CLASSES:
        assert f'hubwatch_hub_requests_total{{status="{label}"}} {totals[label]}\n' in text, (label, text)
