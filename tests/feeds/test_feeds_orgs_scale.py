"""The org page, and pages over many repos in a fixed number of queries (index, /metrics)."""

from __future__ import annotations

from typing import Any


import feedparser
from fastapi.testclient import TestClient
from feeds_seed import HOSTILE, LLAMA2, Seeded, client, feeds_store, seeded  # noqa: F401

from hubwatch.storage import Store
from hubwatch.domain.records import RepoId


def test_org_page_lists_its_models_and_links_its_feeds(client: TestClient) -> None:
    page = client.get("/orgs/meta-llama")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert 'href="/models/meta-llama/Llama-2-7b-hf"' in html and 'href="/models/meta-llama/Llama-3.1-8B-Instruct"' in html
    assert "evil-org" not in html  # another org's model
    assert 'href="/orgs/meta-llama/feed.atom"' in html and 'href="/orgs/meta-llama/feed.rss"' in html
    assert "max_position_embeddings 2048 → 4096" in html  # Llama-2's latest change
    # The index links each model's org page; the org feed points back at the org page.
    assert 'href="/orgs/meta-llama"' in client.get("/").text
    assert 'href="/orgs/meta-llama"' in client.get(f"/models/{LLAMA2}").text
    feed = feedparser.parse(client.get("/orgs/meta-llama/feed.atom").content)
    assert feed.feed.link == "https://hubwatch.example/orgs/meta-llama"


def test_org_page_and_feed_match_the_org_case_insensitively(client: TestClient) -> None:
    # The hub resolves ids case-insensitively (issue 10): /orgs/META-LLAMA is meta-llama's page,
    # shown and linked as the store spells the org.
    html = client.get("/orgs/META-Llama").text
    assert 'href="/models/meta-llama/Llama-2-7b-hf"' in html and "evil-org" not in html
    assert 'href="/orgs/meta-llama/feed.atom"' in html and "META-Llama" not in html
    upper = feedparser.parse(client.get("/orgs/Meta-Llama/feed.atom").content)
    lower = feedparser.parse(client.get("/orgs/meta-llama/feed.atom").content)
    assert [e.id for e in upper.entries] == [e.id for e in lower.entries] and lower.entries


def test_org_page_errors(client: TestClient) -> None:
    missing = client.get("/orgs/nobody-here")
    assert missing.status_code == 404 and "nobody-here" in missing.json()["error"]["message"]
    bad = client.get("/orgs/bad org!")
    assert bad.status_code == 404 and "organisation" in bad.json()["error"]["message"]


def test_feed_ids_are_iris_without_spaces(client: TestClient) -> None:
    for path in ("/feed.atom", "/orgs/meta-llama/feed.atom", f"/models/{LLAMA2}/feed.atom"):
        feed = feedparser.parse(client.get(path).content)
        assert feed.feed.id.startswith("tag:hubwatch,2025:feeds/") and " " not in feed.feed.id, path


def test_index_and_metrics_take_fixed_queries_however_many_repos(  # type: ignore[no-untyped-def]
    client: TestClient, feeds_store: Store, seeded: Seeded, count_selects
) -> None:
    with count_selects(feeds_store) as before:
        assert client.get("/").status_code == 200
    with count_selects(feeds_store) as metrics_before:
        assert client.get("/metrics").status_code == 200
    for i in range(30):
        feeds_store.watch(RepoId("bulk", f"m{i:02d}"))
    with count_selects(feeds_store) as after:
        html = client.get("/").text
    assert 'href="/models/bulk/m29"' in html
    assert len(after) == len(before) <= 6
    with count_selects(feeds_store) as metrics_after:
        text = client.get("/metrics").text
    assert "hubwatch_watched_repos 33\n" in text
    assert len(metrics_after) == len(metrics_before) <= 8  # the store's counts (5) and poll telemetry (3)
    # /metrics counts advisories with COUNT(*), never by loading them.
    assert not any("advisories.osv" in s for s in metrics_after)


def test_index_pages_the_watch_list(client: TestClient, feeds_store: Store) -> None:
    for i in range(120):
        feeds_store.watch(RepoId("bulk", f"m{i:03d}"))
    first = client.get("/").text  # ordered by org/name: bulk/m000 … bulk/m099
    assert "Next page" in first
    assert 'href="/models/bulk/m099"' in first and 'href="/models/bulk/m100"' not in first
    second = client.get("/?page=1").text
    assert 'href="/models/bulk/m100"' in second and f'href="/models/{HOSTILE}"' in second
    assert 'href="/models/bulk/m099"' not in second and "Next page" not in second
    models = client.get("/api/v1/models").json()
    assert len(models["models"]) == 123 and "next" not in models


def test_next_page_links_are_keyset_cursors_that_walk_the_whole_list(
    client: TestClient, feeds_store: Store, count_selects: Any
) -> None:
    import re
    from html import unescape

    for i in range(250):
        feeds_store.watch(RepoId("bulk", f"m{i:03d}"))
    seen: list[str] = []
    url: str | None = "/"
    while url is not None:
        html = client.get(url).text
        seen += [m for m in re.findall(r'<a href="/models/([^"]+)"', html) if m.startswith("bulk/")]
        link = re.search(r'<a rel="next" href="\?([^"]+)"', html)
        url = f"/?{unescape(link.group(1))}" if link else None
        if url is not None:
            assert "after=" in url and "page=" not in url  # a keyset cursor, no offset
    assert seen == [f"bulk/m{i:03d}" for i in range(250)]  # every repo once, in order
    assert 'rel="first"' in client.get("/?after=bulk/m099").text
    # the API pages the same way: `next` carries the last repo of the page
    with count_selects(feeds_store) as statements:
        page = client.get("/api/v1/models?after=bulk/m100").json()
    assert page["models"][0]["repo"] == "bulk/m101"
    # the page is read from the cursor on (org, name, repo_type) — the unique index's order — not
    # counted off from the start (SQLite's dialect writes "LIMIT ? OFFSET ?" for every LIMIT; the
    # offset bound there is 0)
    assert any("(repos.org, repos.name, repos.repo_type) >" in s for s in statements)


def test_a_bad_after_cursor_is_a_400_naming_it(client: TestClient) -> None:
    for url in ("/?after=no-slash", "/api/v1/models?after=a/b/c"):
        answer = client.get(url)
        assert answer.status_code == 400
        assert "after" in answer.text and "org/name" in answer.text
