"""The model page at any depth: a bounded number of queries, and keyset pages ("older →") that are
complete and never overlap."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient
from feeds_seed import make_settings

from hubwatch.domain.records import ChangeRecord, FileRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.feeds import create_app
from hubwatch.feeds.routes.pages import PAGE_SIZE
from hubwatch.storage import Store

__all__: list[str] = []

START = datetime(2024, 1, 1, tzinfo=UTC)


def _grow(store: Store, repo: RepoId, depth: int) -> list[str]:
    store.watch(repo)
    shas, parent = [], None
    for i in range(depth):
        sha = hashlib.sha1(f"{repo}/{i}".encode()).hexdigest()
        change = ChangeRecord(Kind.METADATA, Severity.INFO, "config.json:rev", f"rev {i}", {"key": "rev"})
        store.save_revision(repo, RevisionRecord(sha, parent, START + timedelta(hours=i), f"Update {i}"),
                            [FileRecord("config.json", 2)], {"config.json": b"{}"}, [change],
                            ("t", {"params": {"derived": 1000 + i}}), [])
        shas.append(sha)
        parent = sha
    return shas


def _shown(html: str) -> list[str]:
    return re.findall(r'<article class="revision" id="r-([0-9a-f]{40})"', html)


def test_model_page_queries_do_not_grow_with_depth(store: Store, count_selects) -> None:  # type: ignore[no-untyped-def]
    shallow, deep = RepoId("depth", "shallow"), RepoId("depth", "deep")
    _grow(store, shallow, 3)
    _grow(store, deep, PAGE_SIZE + 30)
    client = TestClient(create_app(make_settings(), store))
    with count_selects(store) as few:
        assert client.get(f"/models/{shallow}").status_code == 200
    with count_selects(store) as many:
        html = client.get(f"/models/{deep}").text
    assert len(many) == len(few) <= 30
    assert len(_shown(html)) == PAGE_SIZE and f"{PAGE_SIZE + 30} revisions, newest first" in html


def test_keyset_pages_are_complete_and_do_not_overlap(store: Store) -> None:
    repo = RepoId("depth", "paged")
    depth = 2 * PAGE_SIZE + 7
    shas = _grow(store, repo, depth)
    client = TestClient(create_app(make_settings(), store))
    seen: list[str] = []
    path: str | None = f"/models/{repo}"
    pages = 0
    while path is not None:
        page = client.get(path)
        assert page.status_code == 200
        seen.extend(_shown(page.text))
        older = re.search(r'<a rel="next" href="([^"]+)">older →</a>', page.text)
        path = older.group(1).replace("&amp;", "&") if older else None
        pages += 1
        if pages > 1:
            assert "Update %d" % (depth - 1) in page.text  # the verdict stays the newest revision's
    assert pages == 3
    assert seen == list(reversed(shas))  # every revision once, newest first


def test_store_history_page_keyset(store: Store) -> None:
    repo = RepoId("depth", "store")
    shas = _grow(store, repo, 7)
    got, cursor = [], None
    while True:
        entries, cursor = store.history_page(repo, before=cursor, limit=3)
        got.extend(e.revision.sha for e in entries)
        if cursor is None:
            break
    assert got == list(reversed(shas)) and store.revision_count(repo) == 7
    assert store.history_page(RepoId("depth", "none")) == ([], None)


def test_bad_cursor_is_a_400(store: Store) -> None:
    repo = RepoId("depth", "bad")
    _grow(store, repo, 1)
    client = TestClient(create_app(make_settings(), store))
    for bad in ("x", "1", "1.x", "-1.2"):
        answer = client.get(f"/models/{repo}", params={"before": bad})
        assert answer.status_code == 400, bad
    assert "No older revision" in client.get(f"/models/{repo}", params={"before": "0.0"}).text
