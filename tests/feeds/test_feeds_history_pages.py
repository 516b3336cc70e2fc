"""The JSON history and the Markdown twin are capped pages (keyset `?before=`): following the
links gives back exactly the whole history, and a history inside one page answers as before."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from feeds_seed import make_settings

import hubwatch.feeds.routes.api as api_routes
import hubwatch.feeds.routes.pages as page_routes
from hubwatch.domain.records import RepoId, RevisionRecord
from hubwatch.feeds import create_app
from hubwatch.feeds.builders.views import history_json
from hubwatch.storage import Store

__all__: list[str] = []

START = datetime(2024, 1, 1, tzinfo=UTC)
REPO = RepoId("pages", "deep")


def _grow(store: Store, depth: int) -> list[str]:
    store.watch(REPO)
    shas, parent = [], None
    for i in range(depth):
        sha = hashlib.sha1(f"{REPO}/{i}".encode()).hexdigest()
        store.save_revision(REPO, RevisionRecord(sha, parent, START + timedelta(hours=i), f"Update {i}"),
                            [], {}, [], None, [])
        shas.append(sha)
        parent = sha
    return shas


def _client(store: Store) -> TestClient:
    return TestClient(create_app(make_settings(), store))


def test_json_history_pages_by_keyset(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    shas = _grow(store, 8)
    client = _client(store)
    whole = client.get(f"/api/v1/models/{REPO}/history")
    assert whole.json() == history_json(store.history(REPO)) and "link" not in whole.headers
    monkeypatch.setattr(api_routes, "HISTORY_PAGE", 3)
    pages, url = [], f"/api/v1/models/{REPO}/history"
    while url:
        answer = client.get(url)
        assert answer.status_code == 200
        rows = answer.json()
        assert len(rows) <= 3 and [r["sha"] for r in rows] == sorted([r["sha"] for r in rows], key=shas.index)
        pages.append(rows)
        link = re.fullmatch(r'<https://hubwatch\.example(/[^>]+)>; rel="next"', answer.headers.get("link", ""))
        url = link.group(1) if link else ""
    assert [len(p) for p in pages] == [3, 3, 2]
    assert [r for p in reversed(pages) for r in p] == whole.json()
    assert client.get(f"/api/v1/models/{REPO}/history?before=nope").status_code == 400


def test_markdown_pages_by_keyset(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    shas = _grow(store, 7)
    client = _client(store)
    whole = client.get(f"/models/{REPO}.md").text
    assert "Older revisions" not in whole and "7 revisions tracked." in whole
    monkeypatch.setattr(page_routes, "PAGE_SIZE", 3)
    seen, url = [], f"/models/{REPO}.md"
    while url:
        text = client.get(url).text
        assert "7 revisions tracked." in text
        seen += re.findall(r"^## ([0-9a-f]+) ·", text, re.M)
        older = re.search(r"\[Older revisions →\]\(https://hubwatch\.example(/[^)]+)\)", text)
        url = older.group(1) if older else ""
    assert seen == [s[: len(seen[0])] for s in reversed(shas)]
