"""Text that keeps the point on the revision page, the feeds and the Markdown twin: added and
removed values said so (never "null → null"), no expander holding only metadata, nouns counted
right, and the most important change first (a custom-code hazard before a template update)."""

from __future__ import annotations

from collections.abc import Iterator

import feedparser
import pytest
from fastapi.testclient import TestClient
from feeds_seed import LLAMA3, Seeded, change, client, feeds_store, make_settings, seeded, when  # noqa: F401

from hubwatch.domain.records import ChangeRecord, Direction, FileRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.feeds import create_app
from hubwatch.storage import Store

REPO = RepoId("acme", "mixed")
SHA = "7" * 40


@pytest.fixture
def mixed(feeds_store: Store) -> Iterator[TestClient]:
    feeds_store.watch(REPO)
    changes: list[ChangeRecord] = [
        ChangeRecord(Kind.CHAT_TEMPLATE, Severity.HIGH, "chat_template.jinja", "chat template updated",
                     {"file": "chat_template.jinja", "key": None, "old": "a", "new": "b", "direction": "update",
                      "template": "default"}, Direction.UPDATE),
        ChangeRecord(Kind.CUSTOM_CODE, Severity.HIGH, "modeling_x.py", "custom code added: modeling_x.py",
                     {"file": "modeling_x.py", "key": None, "old": None, "new": None, "direction": "hazard",
                      "hazards": ["code:modeling_x.py"], "text_diff": "--- /dev/null\n+++ new/modeling_x.py\n@@ -0,0 +1 @@\n+import os"},
                     Direction.HAZARD),
        ChangeRecord(Kind.FILES, Severity.LOW, "notes.txt", "notes.txt removed",
                     {"file": "notes.txt", "key": None, "old": "notes.txt", "new": None, "direction": "update", "op": "removed"},
                     Direction.UPDATE),
    ]
    revision = RevisionRecord(SHA, None, when(27), "mixed", "mixed")
    assert feeds_store.save_revision(REPO, revision, [FileRecord("config.json", 2)], {"config.json": b"{}"}, changes,
                                     None, [])
    with TestClient(create_app(make_settings(), feeds_store)) as c:
        yield c


def test_added_and_removed_say_so_and_no_metadata_expander(mixed: TestClient) -> None:
    html = mixed.get(f"/models/{REPO}/revisions/{SHA}").text
    assert "null →" not in html and "→ null" not in html and "<code class=\"old\" title=\"old\">null" not in html
    assert '<span class="badge">removed</span> <code class="old" title="old">&#34;notes.txt&#34;</code>' in html
    assert "More detail" not in html  # direction, hazards, op and template are metadata
    assert "3 tracked changes" in html


def test_pickle_added_shows_the_new_file_as_added(client: TestClient, seeded: Seeded) -> None:
    html = client.get(f"/models/{LLAMA3}/revisions/{seeded.shas[LLAMA3][1]}").text
    assert '<span class="badge">added</span> <code class="new" title="new">&#34;pytorch_model.bin&#34;</code>' in html
    assert "null →" not in html and "1 tracked change" in html and "1 tracked changes" not in html


def test_most_important_change_first_everywhere(mixed: TestClient) -> None:
    html = mixed.get(f"/models/{REPO}/revisions/{SHA}").text
    verdict = html[html.index('<div class="verdict">'):]
    assert verdict.index("sev-high") < verdict.index("tracked changes")
    entry = feedparser.parse(mixed.get(f"/models/{REPO}/feed.atom").content).entries[0]
    assert entry.title.startswith(f"{REPO} @ 7777777: custom_code/high: custom code added")
    assert entry.summary.index("custom code added") < entry.summary.index("chat template updated")
    markdown = mixed.get(f"/models/{REPO}.md").text
    assert markdown.index("custom code added") < markdown.index("chat template updated")
    index = mixed.get("/?q=acme/mixed").text
    assert index.index("custom code added") < index.index("chat template updated")
