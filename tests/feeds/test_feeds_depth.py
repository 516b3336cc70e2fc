"""The model page at any depth: a bounded number of queries, keyset pages ("older →", "← newer",
rel=next/prev in <head> too) that are complete and never overlap, one line a revision."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient
from feeds_seed import make_settings

from hubwatch.domain.records import ChangeRecord, FileRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.feeds import create_app
from hubwatch.feeds.routes.pages import MODEL_PAGE_SIZE as PAGE_SIZE
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
    return re.findall(r'<li class="revision" id="r-([0-9a-f]{40})"', html)


def test_model_page_queries_do_not_grow_with_depth(store: Store, count_selects) -> None:  # type: ignore[no-untyped-def]
    shallow, deep = RepoId("depth", "shallow"), RepoId("depth", "deep")
    _grow(store, shallow, 3)
    _grow(store, deep, PAGE_SIZE + 30)
    client = TestClient(create_app(make_settings(), store))
    with count_selects(store) as few:
        assert client.get(f"/models/{shallow}").status_code == 200
    with count_selects(store) as many:
        html = client.get(f"/models/{deep}").text
    assert len(many) == len(few) <= 40  # the page, the verdict, the charts, the estimate panel
    with count_selects(store) as again:
        assert client.get(f"/models/{deep}").status_code == 200
    assert len(again) <= len(many) - 5  # the standing and the charts kept for the history version
    assert len(_shown(html)) == PAGE_SIZE and f"{PAGE_SIZE + 30} revisions, newest first" in html
    # one summary line a revision (the estimate and the change list stay on the revision page)
    assert "<table" not in html.split("<ol class=\"revisions\">")[1]
    assert f"rev {PAGE_SIZE + 29}" in html and "parameters" in html


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
    # rel=prev ("← newer") walks back through the same revisions, page by page, to the newest page
    back: list[list[str]] = []
    older_paths = _older_paths(client, repo)
    assert len(older_paths) == 3
    newer: str | None = older_paths[-1]
    while newer is not None:
        page = client.get(newer).text
        back.append(_shown(page))
        found = re.search(r'<link rel="prev" href="([^"]+)">', page)
        visible = re.search(r'<a rel="prev" href="([^"]+)">← newer</a>', page)
        assert (found is None) == (visible is None) and (found is None or found.group(1) == visible.group(1))
        newer = found.group(1).replace("&amp;", "&") if found else None
    assert [s for p in reversed(back) for s in p] == list(reversed(shas))
    assert [len(p) for p in back][-1] == PAGE_SIZE  # the newest page is full: pages align from the top


def _older_paths(client: TestClient, repo: RepoId) -> list[str]:
    """The paths of the older pages, following <link rel="next"> from the first page."""
    out: list[str] = [f"/models/{repo}"]
    while True:
        found = re.search(r'<link rel="next" href="([^"]+)">', client.get(out[-1]).text)
        if found is None:
            return out
        out.append(found.group(1).replace("&amp;", "&"))


def test_store_history_page_keyset(store: Store) -> None:
    repo = RepoId("depth", "store")
    shas = _grow(store, repo, 7)
    got, cursor = [], None
    while True:
        entries, cursor = store.revisions.history_page(repo, before=cursor, limit=3)
        got.extend(e.revision.sha for e in entries)
        if cursor is None:
            break
    assert got == list(reversed(shas)) and store.revisions.revision_count(repo) == 7
    assert store.revisions.history_page(RepoId("depth", "none")) == ([], None)


def test_bad_cursor_is_a_400(store: Store) -> None:
    repo = RepoId("depth", "bad")
    _grow(store, repo, 1)
    client = TestClient(create_app(make_settings(), store))
    for bad in ("x", "1", "1.x", "-1.2"):
        answer = client.get(f"/models/{repo}", params={"before": bad})
        assert answer.status_code == 400, bad
    assert "No older revision" in client.get(f"/models/{repo}", params={"before": "0.0"}).text


def test_the_cached_head_verdict_follows_new_advisories(store: Store) -> None:
    from hubwatch.domain.records import AdvisoryRecord

    repo = RepoId("depth", "verdict")
    shas = _grow(store, repo, 3)
    client = TestClient(create_app(make_settings(), store))
    assert "is up to date" in client.get(f"/models/{repo}").text
    assert "is up to date" in client.get(f"/models/{repo}").text  # the cached standing, same answer
    url = repo.url()
    osv = {"schema_version": "1.7.5", "id": "x_DEPTH-1", "modified": "2024-01-02T00:00:00Z",
           "published": "2024-01-02T00:00:00Z", "summary": "eos changed",
           "affected": [{"package": {"ecosystem": "GIT", "name": url},
                         "ranges": [{"type": "GIT", "repo": url, "events": [{"introduced": shas[1]}]}]}],
           "database_specific": {"max_severity": "high"}}  # fmt: skip
    store.revisions.replace_derived(repo, {}, [AdvisoryRecord("x_DEPTH-1", repo, shas[1], osv, START)])
    assert "carries 1 hazard (worst: high)" in client.get(f"/models/{repo}").text
