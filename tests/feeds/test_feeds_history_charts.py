"""The model page's charts span the whole history (store.revisions.estimate_series, at most CHART_POINTS
revisions spread evenly over it), whichever keyset page is shown, and draw the same series as
building them from those revisions' full history entries."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient
from feeds_seed import make_settings

from hubwatch.estimator.estimate import Estimate
from hubwatch.domain.records import ChangeRecord, FileRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.feeds import create_app
from hubwatch.feeds.builders.views import chart_view, estimate_view, stored_estimate
from hubwatch.feeds.routes.pages import CHART_POINTS, MODEL_PAGE_SIZE, history_charts, revision_charts
from hubwatch.feeds.text import short_sha
from hubwatch.storage import Store
from hubwatch.storage.revisions.history import sample_positions

__all__: list[str] = []

START = datetime(2024, 1, 1, tzinfo=UTC)


def _estimate(i: int) -> dict[str, Any] | None:
    """A mix of what is stored: full estimates, params only, failures, odd values, none at all."""
    kind = i % 7
    if kind == 0:
        return None
    if kind == 1:
        return {"error": "config.json is not JSON", "params": {"derived": 5}}
    if kind == 2:
        return {"params": {"derived": 1000 + i, "checkpoint": 990 + i}}
    if kind == 3:
        return {"params": {"derived": 0}, "memory_gb": {"lora": 2.5, "qlora": None}, "settings": {"method": "lora"}}
    if kind == 4:
        return {"params": "odd", "memory_gb": {"full_finetune": "x", "serve_weights": 1.25 + i}}
    if kind == 5:
        return {"params": {"derived": 2000 + i}, "methods": {}, "cards": [{"name": "A100"}], "findings": [1]}
    return {"params": {"derived": 3000 + i}, "memory_gb": {"full_finetune": 40.0 + i, "lora": 12.0, "kv_cache": 0.5}}


def _grow(store: Store, repo: RepoId, depth: int) -> list[str]:
    store.watch(repo)
    shas, parent = [], None
    for i in range(depth):
        sha = hashlib.sha1(f"{repo}/{i}".encode()).hexdigest()
        change = ChangeRecord(Kind.METADATA, Severity.INFO, "config.json:rev", f"rev {i}", {"key": "rev"})
        data = _estimate(i)
        store.save_revision(repo, RevisionRecord(sha, parent, START + timedelta(hours=i), f"Update {i}"),
                            [FileRecord("config.json", 2)], {"config.json": b"{}"}, [change],
                            ("t", data) if data is not None else None, [])
        if i % 5 == 3:  # a newer estimate (another estimator version) is the one shown
            store.revisions.save_estimate(repo, sha, "u", {"params": {"derived": 7000 + i}, "memory_gb": {"qlora": 3.0}})
        shas.append(sha)
        parent = sha
    return shas


def _from_full_history(store: Store, repo: RepoId) -> list[Any]:
    """The charts as the model page drew them before pagination: every entry, fully decoded."""
    entries = store.history(repo)
    views = [estimate_view(stored_estimate(e)) for e in entries]
    return revision_charts([short_sha(e.revision.sha) for e in entries], views)


def _charts_html(html: str) -> str:
    found = re.search(r'<section class="charts">.*?</section>', html, re.S)
    return found.group(0) if found else ""


def test_series_matches_full_history(store: Store) -> None:
    repo = RepoId("charts", "small")
    shas = _grow(store, repo, 40)
    points = store.revisions.estimate_series(repo)
    entries = store.history(repo)
    assert [p.sha for p in points] == shas == [e.revision.sha for e in entries]
    assert [p.position for p in points] == [e.position for e in entries]
    assert [p.date for p in points] == [e.revision.date for e in entries]
    assert [p.estimate for p in points] == [e.estimate for e in entries]
    for p in points:
        full, light = estimate_view(Estimate.from_json(p.estimate)), chart_view(p.estimate)
        assert (full is None) == (light is None)
        if full is not None and light is not None:
            assert (full.params, full.memory) == (light.params, light.memory)
    expected = _from_full_history(store, repo)
    assert len(expected) == 2 and history_charts(points) == expected
    client = TestClient(create_app(make_settings(), store))
    html = client.get(f"/models/{repo}").text
    assert _charts_html(html) == '<section class="charts">' + "".join(expected) + "</section>"


def test_deep_history_charts_are_bounded_and_span_the_whole_history_on_every_page(store: Store) -> None:
    repo = RepoId("charts", "deep")
    depth = CHART_POINTS + 9
    shas = _grow(store, repo, depth)
    points = store.revisions.estimate_series(repo, CHART_POINTS)
    wanted = sample_positions(depth - 1, CHART_POINTS)
    assert len(points) <= CHART_POINTS and [p.position for p in points] == wanted
    assert points[0].sha == shas[0] and points[-1].sha == shas[-1]  # the first and the newest revision
    entries = [e for e in store.history(repo) if e.position in set(wanted)]
    assert [p.estimate for p in points] == [e.estimate for e in entries]
    views = [estimate_view(stored_estimate(e)) for e in entries]
    charts = revision_charts([short_sha(e.revision.sha) for e in entries], views)
    expected = '<section class="charts">' + "".join(charts) + "</section>"
    client = TestClient(create_app(make_settings(), store))
    path: str | None = f"/models/{repo}"
    pages = 0
    while path is not None:
        html = client.get(path).text
        assert _charts_html(html) == expected
        older = re.search(r'<a rel="next" href="([^"]+)">older →</a>', html)
        path = older.group(1).replace("&amp;", "&") if older else None
        pages += 1
    assert pages == -(-depth // MODEL_PAGE_SIZE)
    # a history no longer than the bound is charted whole
    assert store.revisions.estimate_series(repo, depth) == store.revisions.estimate_series(repo)


def test_sample_positions_spread_evenly() -> None:
    assert sample_positions(9, 120) == list(range(10))
    spread = sample_positions(999, 120)
    assert len(spread) == 120 and spread[0] == 0 and spread[-1] == 999
    gaps = {b - a for a, b in zip(spread, spread[1:])}
    assert gaps <= {8, 9}


def test_unknown_and_empty_repo(store: Store) -> None:
    assert store.revisions.estimate_series(RepoId("charts", "none")) == []
    store.watch(RepoId("charts", "empty"))
    assert store.revisions.estimate_series(RepoId("charts", "empty")) == []
    assert history_charts([]) == []


def test_cached_charts_follow_a_re_estimate(store: Store) -> None:
    repo = RepoId("charts", "re-estimated")
    shas = _grow(store, repo, 5)
    client = TestClient(create_app(make_settings(), store))
    before = _charts_html(client.get(f"/models/{repo}").text)
    assert before == _charts_html(client.get(f"/models/{repo}").text)  # kept for the history version
    assert store.revisions.save_estimate(repo, shas[2], "later", {"params": {"derived": 123_456_789_000}})
    after = _charts_html(client.get(f"/models/{repo}").text)
    assert after != before and "123" in after
