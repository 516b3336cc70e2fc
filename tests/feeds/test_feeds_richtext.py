"""Advisory details (hubwatch's Markdown around hostile upstream text) rendered as safe HTML."""

from __future__ import annotations

import dataclasses
import json
import re

from fastapi.testclient import TestClient
from feeds_seed import HOSTILE, Seeded, advisory, client, feeds_store, seeded, sha, when  # noqa: F401

from hubwatch.feeds.builders.richtext import MARKDOWN_MAX, render_markdown
from hubwatch.domain.urls import is_safe_url
from hubwatch.storage import Store
from hubwatch.domain.records import FileRecord, Kind, RevisionRecord, Severity
from hubwatch.advisories.advise_text import render_details

EVIL = (
    "<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3)) "
    "<javascript:alert(4)> [d](data:text/html,<b>x</b>) ]]> {{ 7*7 }}"
)


def _tags(html: str) -> set[str]:
    return {m.lower() for m in re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", html)}


def test_raw_html_is_escaped_and_only_http_links_survive() -> None:
    html = str(render_markdown(EVIL + " [ok](https://huggingface.co/x/y) <https://hub.example/a>"))
    assert _tags(html) <= {"p", "a"}
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "]]&gt;" in html and "{{ 7*7 }}" in html  # template text stays text, never evaluated
    hrefs = re.findall(r'<a href="([^"]*)"', html)
    assert hrefs == ["https://huggingface.co/x/y", "https://hub.example/a"]
    assert html.count('rel="nofollow noopener noreferrer"') == 2
    assert "javascript:" not in "".join(hrefs) and "data:" not in "".join(hrefs)


def test_reference_links_images_and_odd_schemes_are_not_links() -> None:
    html = str(render_markdown(
        "[a][r] [b](JavaScript:alert(1)) [c](/models/x) [e](mailto:a@b.c) ![i](https://evil.example/p.png)\n\n"
        "[r]: javascript:alert(2)\n"
    ))
    assert "<img" not in html and re.findall(r'href="([^"]*)"', html) == ["https://evil.example/p.png"]
    for scheme in ("safe", "ftp://x/y", "http:/nohost", "//host/p", " javascript:x"):
        assert not is_safe_url(scheme), scheme
    assert is_safe_url("http://h/p") and is_safe_url("HTTPS://h")


def test_normal_markdown_renders_as_html() -> None:
    html = str(render_markdown(
        "Upstream commit [`abc123`](https://huggingface.co/o/n/commit/abc123) of **o/n** changed:\n\n"
        "- **high** `chat_template`: one\n- **info** `config.json`: two\n"
    ))
    assert '<a href="https://huggingface.co/o/n/commit/abc123" rel="nofollow noopener noreferrer"><code>abc123</code></a>' in html
    assert "<strong>o/n</strong>" in html and "<ul>" in html and html.count("<li>") == 2
    assert "<code>chat_template</code>" in html


def test_non_text_and_oversized_details() -> None:
    assert render_markdown(None) == "" and render_markdown({"x": 1}) == "" and render_markdown("") == ""
    html = str(render_markdown("a" * (MARKDOWN_MAX + 5)))
    assert "(5 more characters in the JSON record)" in html and len(html) < MARKDOWN_MAX + 200


def test_advisory_page_renders_details_written_by_the_tracker(
    client: TestClient, feeds_store: Store, seeded: Seeded
) -> None:
    parent = seeded.shas[HOSTILE][-1]
    commit = sha("richtext")
    record = advisory(HOSTILE, commit, when(26), Kind.CHAT_TEMPLATE, Severity.HIGH, "template changed")
    ds = {"commit": commit, "commit_title": f"Update {EVIL}", "direction": "hazard",
          "changes": [{"severity": "high", "kind": "chat_template", "path": "tokenizer_config.json:chat_template",
                       "summary": f"rendered prompt changed {EVIL}"}]}
    details = render_details(HOSTILE, ds, HOSTILE.url(), "https://hubwatch.example")
    record = dataclasses.replace(record, osv={**record.osv, "details": details})
    body = json.dumps({"model_type": "llama"}).encode()
    revision = RevisionRecord(commit, parent, when(26), "Update", "Update", ("evil",))
    assert feeds_store.save_revision(HOSTILE, revision, [FileRecord("config.json", len(body))],
                                     {"config.json": body}, [], None, [record])
    response = client.get(f"/advisories/{record.id}")
    assert response.status_code == 200
    assert "script-src" not in response.headers["content-security-policy"]
    html = response.text
    section = html[html.index('<div class="details">'):html.index("<h2>Affected ranges</h2>")]
    assert _tags(section) <= {"div", "p", "a", "code", "strong", "ul", "li"}
    assert "<script" not in section and "<img" not in section
    assert section.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 2  # title and summary, both as text
    assert "]]&gt;" in section and "{{ 7*7 }}" in section
    hrefs = re.findall(r'href="([^"]*)"', section)
    assert hrefs == [f"{HOSTILE.url()}/commit/{commit}"]  # the hub commit link; no javascript:/data:
    assert f"<strong>{HOSTILE}</strong>" in section and "<li><strong>high</strong> <code>chat_template</code>" in section
