"""Atom, RSS and JSON feeds: parse with feedparser, order, stable ids, filters, ETag/304, hostile text."""

from __future__ import annotations

import feedparser
from fastapi.testclient import TestClient
from feeds_seed import HOSTILE, LLAMA2, LLAMA3, Seeded, client, feeds_store, seeded, when  # noqa: F401

from hubwatch.feeds.builders.feeds import entry_id
from hubwatch.domain.records import RevisionRecord


def _ids(body: bytes) -> list[str]:
    parsed = feedparser.parse(body)
    assert not parsed.bozo, parsed.get("bozo_exception")
    return [e.id for e in parsed.entries]


def test_model_atom_lists_changed_revisions_newest_first_with_stable_ids(client: TestClient, seeded: Seeded) -> None:
    response = client.get(f"/models/{LLAMA2}/feed.atom")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/atom+xml")
    shas = seeded.shas[LLAMA2]
    # the first revision has no change, so it has no entry; newest first
    assert _ids(response.content) == [f"tag:hubwatch,2023-07-{d}:{LLAMA2}/{s}" for d, s in
                                      ((21, shas[3]), (20, shas[2]), (19, shas[1]))]
    parsed = feedparser.parse(response.content)
    assert parsed.feed.updated.startswith("2023-07-21T12:00:00")  # newest entry, not the clock
    first = parsed.entries[0]
    assert "max_position_embeddings 2048 → 4096" in first.title
    assert first.link == f"https://hubwatch.example/models/{LLAMA2}/revisions/{shas[3]}"
    assert first.content[0].type == "text/html" and "<li><strong>context/medium</strong>" in first.content[0].value
    assert 'href="https://hubwatch.example/advisories/x_HUBWATCH-2023-' in first.content[0].value
    assert first.summary.startswith("context/medium: max_position_embeddings 2048 → 4096")
    # same request, same bytes: ids and timestamps come from the data
    assert client.get(f"/models/{LLAMA2}/feed.atom").content == response.content


def test_rss_has_the_same_entries_as_atom_with_guids(client: TestClient) -> None:
    atom = client.get(f"/models/{LLAMA2}/feed.atom")
    rss = client.get(f"/models/{LLAMA2}/feed.rss")
    assert rss.headers["content-type"].startswith("application/rss+xml")
    assert _ids(rss.content) == _ids(atom.content)
    assert b'isPermaLink="false"' in rss.content
    entry = feedparser.parse(rss.content).entries[0]
    assert "<li><strong>context/medium</strong>" in entry.content[0].value  # content:encoded
    assert entry.description.startswith("context/medium: max_position_embeddings")


def test_json_feed_1_1(client: TestClient, seeded: Seeded) -> None:
    response = client.get(f"/models/{LLAMA2}/feed.json")
    assert response.headers["content-type"].startswith("application/feed+json")
    doc = response.json()
    assert doc["version"] == "https://jsonfeed.org/version/1.1"
    assert doc["feed_url"] == f"https://hubwatch.example/models/{LLAMA2}/feed.json"
    assert [i["id"] for i in doc["items"]] == _ids(client.get(f"/models/{LLAMA2}/feed.atom").content)
    assert doc["items"][0]["date_published"] == "2023-07-21T12:00:00Z"
    assert all(i["content_html"] and i["content_text"] for i in doc["items"])


def test_org_and_global_feeds_scope(client: TestClient, seeded: Seeded) -> None:
    org = _ids(client.get("/orgs/meta-llama/feed.atom").content)
    newest = RevisionRecord(seeded.shas[LLAMA3][1], None, when(23), "")
    assert org[0] == entry_id(LLAMA3, newest)
    assert len(org) == 4 and all("meta-llama/" in i for i in org)
    everything = _ids(client.get("/feed.rss").content)
    assert len(everything) == 5 and str(HOSTILE) in everything[0]
    assert _ids(client.get("/orgs/nobody/feed.atom").content) == []


def test_filters_by_kind_and_min_severity(client: TestClient, seeded: Seeded) -> None:
    shas = seeded.shas[LLAMA2]
    only = _ids(client.get(f"/models/{LLAMA2}/feed.atom?kind=context").content)
    assert [i.rsplit("/", 1)[1] for i in only] == [shas[3]]
    high = _ids(client.get(f"/models/{LLAMA2}/feed.atom?min_severity=high").content)
    assert [i.rsplit("/", 1)[1] for i in high] == [shas[2], shas[1]]
    both = _ids(client.get("/feed.atom?kind=pickle,context&min_severity=medium").content)
    assert len(both) == 2
    # the entry id does not depend on the filter
    assert high[0] in _ids(client.get(f"/models/{LLAMA2}/feed.atom").content)


def test_bad_filters_and_unknown_feeds_use_the_error_shape(client: TestClient) -> None:
    bad = client.get(f"/models/{LLAMA2}/feed.atom?kind=nonsense")
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "bad_request" and "nonsense" in bad.json()["error"]["message"]
    assert client.get(f"/models/{LLAMA2}/feed.atom?min_severity=huge").status_code == 400
    assert client.get("/models/nobody/nothing/feed.atom").json()["error"]["code"] == "not_found"
    assert client.get(f"/models/{LLAMA2}/feed.xml").status_code == 404


def test_etag_and_last_modified_give_304(client: TestClient) -> None:
    first = client.get(f"/models/{LLAMA2}/feed.atom")
    etag = first.headers["etag"]
    assert first.headers["last-modified"] == "Fri, 21 Jul 2023 12:00:00 GMT"
    again = client.get(f"/models/{LLAMA2}/feed.atom", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag
    stale = client.get(f"/models/{LLAMA2}/feed.atom", headers={"If-None-Match": '"other"'})
    assert stale.status_code == 200
    since = client.get(f"/models/{LLAMA2}/feed.rss", headers={"If-Modified-Since": first.headers["last-modified"]})
    assert since.status_code == 304
    # a filtered feed is another document with another tag
    assert client.get(f"/models/{LLAMA2}/feed.atom?kind=context").headers["etag"] != etag


def test_hostile_text_is_escaped_and_stripped_in_xml(client: TestClient) -> None:
    for fmt in ("atom", "rss"):
        body = client.get(f"/models/{HOSTILE}/feed.{fmt}").content
        assert b"<script>" not in body
        assert not any(c in body for c in (b"\x01", b"\x07", b"\x1b"))
        parsed = feedparser.parse(body)
        assert not parsed.bozo
        entry = parsed.entries[0]
        assert "]]>" in entry.title and "<script>alert(1)</script>" in entry.title  # as text, not markup
    doc = client.get(f"/models/{HOSTILE}/feed.json").json()
    assert "&lt;script&gt;" in doc["items"][0]["content_html"]
    assert "\x01" not in doc["items"][0]["content_text"]
