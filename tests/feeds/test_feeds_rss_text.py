"""RSS descriptions give back exactly the original text once parsed (feedparser), and the channel
links to the HTML page; hostile remote text never comes back as a tag."""

from __future__ import annotations

import html
from datetime import UTC, datetime

import feedparser
import pytest
from fastapi.testclient import TestClient
from feeds_seed import HOSTILE, LLAMA2, client, feeds_store, seeded  # noqa: F401

from hubwatch.domain.records import ChangeRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.feeds.builders.feeds import FeedMeta, atom_bytes, feed_entries, rss_bytes
from hubwatch.storage.core.values import FeedItem

HOSTILE_STRINGS = [
    "<script>alert(1)</script>",
    "licence: Apache &amp; MIT <b>bold</b>",
    "R&D \"quoted\" 'single' < > &lt;already&gt;",
    "]]> <![CDATA[ x ]]> &#60;script&#62;",
]


def _feeds(summary: str) -> tuple[bytes, bytes, str]:
    revision = RevisionRecord("3" * 40, None, datetime(2024, 5, 1, tzinfo=UTC), "t")
    items = [FeedItem(RepoId("o", "n"), revision, [ChangeRecord(Kind.LICENSE, Severity.MEDIUM, "README.md", summary)], [])]
    meta = FeedMeta("tag:hubwatch,2025:feeds/t", "t", "s", "https://h/models/o/n/feed.rss", "https://h/models/o/n")
    entries = feed_entries(items, "https://h")
    return rss_bytes(meta, entries), atom_bytes(meta, entries), entries[0].text


@pytest.mark.parametrize("summary", HOSTILE_STRINGS)
def test_parsed_rss_description_is_the_original_text_and_no_tag(summary: str) -> None:
    rss, atom, text = _feeds(summary)
    assert text == f"license/medium: {summary}"
    entry = feedparser.parse(rss).entries[0]
    # RSS <description> is HTML: what a reader shows is the HTML's text, equal to the original
    assert entry.summary_detail.type == "text/html"
    assert html.unescape(entry.summary) == text
    assert "<" not in entry.summary  # no tag (a <script> or <b>) survives as markup
    assert feedparser.parse(atom).entries[0].summary == text  # Atom <summary type="text">: as it is


def test_rss_channel_link_is_the_html_page_not_the_feed(client: TestClient) -> None:
    for path, page in ((f"/models/{LLAMA2}/feed.rss", f"/models/{LLAMA2}"), ("/orgs/meta-llama/feed.rss", "/orgs/meta-llama")):
        parsed = feedparser.parse(client.get(path).content)
        assert parsed.feed.link == f"https://hubwatch.example{page}", path
        assert any(l.rel == "self" and l.href.endswith(path) for l in parsed.feed.links)


def test_hostile_repo_rss_description_round_trips(client: TestClient) -> None:
    parsed = feedparser.parse(client.get(f"/models/{HOSTILE}/feed.rss").content)
    summary = parsed.entries[0].summary
    assert "<script" not in summary and "&lt;script&gt;alert(1)&lt;/script&gt;" in summary
    assert html.unescape(summary).startswith("special_tokens/critical: eos <script>alert(1)</script> ]]>")
