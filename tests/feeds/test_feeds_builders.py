"""The web app's pure builders: text safety, page tokens, conditional responses, plots, estimates."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hubwatch.feeds.builders.markdown import md_escape
from hubwatch.feeds.builders.osv import QueryError, decode_page_token, page, parse_query
from hubwatch.feeds.builders.plots import Series, line_chart
from hubwatch.estimator import Estimate
from hubwatch.feeds.builders.views import EstimateView, estimate_view
from hubwatch.feeds.text import fmt_bytes, fmt_count, xml_safe
from hubwatch.domain.records import AdvisoryRecord, RepoId


@given(st.text())
def test_xml_safe_leaves_only_xml_characters(text: str) -> None:
    cleaned = xml_safe(text)
    assert all(c in "\t\n\r" or 0x20 <= ord(c) < 0x7F or 0xA0 <= ord(c) or c == "\x85" for c in cleaned)
    assert not any(0xD800 <= ord(c) <= 0xDFFF or c in "\ufffe\uffff" for c in cleaned)


@given(st.text())
def test_md_escape_never_lets_markup_through(text: str) -> None:
    escaped = md_escape(text)
    assert "<" not in escaped and ">" not in escaped and "\n" not in escaped
    assert "[" not in escaped.replace("\\[", "")


def _adv(i: int) -> AdvisoryRecord:
    return AdvisoryRecord(f"x_T-{i:03d}", RepoId("a", "b"), "0" * 40, {"id": f"x_T-{i:03d}"},
                          datetime(2024, 1, 1, tzinfo=UTC))


def test_paging_walks_every_record_once_in_id_order() -> None:
    records = [_adv(i) for i in (5, 1, 4, 2, 3, 1)]
    seen, token = [], None
    while True:
        chunk, token = page(records, token, 2)
        seen += [a.id for a in chunk]
        if token is None:
            break
    assert seen == [f"x_T-{i:03d}" for i in range(1, 6)]


def test_page_tokens_are_checked() -> None:
    import base64

    def token(text: str) -> str:
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    assert decode_page_token(token("o:4")) == 4
    for bad in ("%%%", token("x:1"), token("o:-1"), token("o:many"), "\u00e9"):
        with pytest.raises(QueryError, match="page_token"):
            decode_page_token(bad)
    with pytest.raises(QueryError, match="page_token"):
        parse_query({"commit": "a" * 40, "page_token": token("nope")})


def test_package_urls_are_parsed() -> None:
    query = parse_query({"package": {"ecosystem": "GIT", "name": "https://huggingface.co/org/name.git/"},
                         "version": "abc1234"})
    assert query.repo == RepoId("org", "name") and query.version == "abc1234"
    with pytest.raises(QueryError, match="purl"):
        parse_query({"package": {"purl": "pkg:pypi/x"}})


def test_line_chart_escapes_labels_and_skips_unknown_values() -> None:
    svg = line_chart("t<i>", ["a", "<b>", "c"], [Series("s&", (1.0, None, 3.0))], fmt_count)
    assert "<i>" not in svg and "t&lt;i&gt;" in svg and "&lt;b&gt;" in svg and "s&amp;" in svg
    assert svg.count("<circle") == 2
    assert line_chart("t", ["a"], [Series("s", (None,))], fmt_count) == ""


def test_estimate_view_tolerates_missing_and_odd_keys() -> None:
    def view(data: dict[str, Any] | None) -> EstimateView | None:
        return estimate_view(Estimate.from_json(data))

    assert view(None) is None
    empty = view({})
    assert empty is not None and empty.params is None and empty.memory == () and empty.cards == ()
    odd = view({"params": "many", "memory_gb": {"full_finetune": "big", "lora": 1.5, "qlora": None},
                "cards": [{"name": "L4", "lora_batch": 2, "qlora_batch": "x"}, "junk", {"memory_gb": 3}]})
    assert odd is not None and odd.params is None and odd.memory == (("LoRA", 1_500_000_000),)
    assert [(c.name, c.batches) for c in odd.cards] == [("L4", (("LoRA", 2), ("QLoRA", None)))]
    # Only the estimator's own keys are read: guessed paths ("parameters", "memory") show nothing.
    guessed = view({"parameters": 7, "memory": {"serve": 5}})
    assert guessed is not None and guessed.params is None and guessed.memory == ()
    plain = view({"params": {"derived": 7}, "memory_gb": {"serve_weights": 5},
                  "settings": {"method": "lora", "batch": 1, "seq_len": 512}})
    assert plain is not None and plain.params == 7 and plain.memory == (("serve weights", 5_000_000_000),)
    assert plain.settings == "method lora, seq_len 512, batch 1, lora_rank 16, precision amp-bf16, optimizer adamw"
    assert view({"error": "bad config"}).error == "bad config"  # type: ignore[union-attr]


def test_human_units() -> None:
    assert fmt_count(6_738_415_616) == "6.74 B" and fmt_count(None) == "—" and fmt_count(12) == "12"
    assert fmt_bytes(26_624_000_000) == "26.62 GB" and fmt_bytes(100) == "100 B"


def test_feed_builders_strip_nul_and_escape_markup() -> None:
    import feedparser

    from hubwatch.feeds.builders.feeds import FeedMeta, atom_bytes, feed_entries, rss_bytes
    from hubwatch.domain.records import ChangeRecord, Kind, RevisionRecord, Severity
    from hubwatch.storage.core.values import FeedItem

    nasty = "a\x00b <script>x</script> ]]> \ud800 \x1b"
    revision = RevisionRecord("1" * 40, None, datetime(2024, 5, 1, 8, tzinfo=UTC), nasty, nasty, (nasty,))
    change = ChangeRecord(Kind.LICENSE, Severity.MEDIUM, "README.md:license", nasty)
    items = [FeedItem(RepoId("o", "n"), revision, [change], [])]
    meta = FeedMeta("tag:hubwatch,2025:feeds/t", nasty, nasty, "https://h/feed.atom", "https://h/")
    entries = feed_entries(items, "https://h")
    for body in (atom_bytes(meta, entries), rss_bytes(meta, entries)):
        assert b"\x00" not in body and b"<script>" not in body
        parsed = feedparser.parse(body)
        assert not parsed.bozo and parsed.entries[0].id == f"tag:hubwatch,2024-05-01:o/n/{'1' * 40}"
        assert "ab <script>x</script> ]]>" in parsed.entries[0].title


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=80))
def test_any_remote_text_gives_a_well_formed_feed_that_keeps_it(text: str) -> None:
    import feedparser
    import lxml.etree

    from hubwatch.feeds.builders.feeds import FeedMeta, atom_bytes, feed_entries, rss_bytes
    from hubwatch.domain.records import ChangeRecord, Kind, RevisionRecord, Severity
    from hubwatch.storage.core.values import FeedItem

    revision = RevisionRecord("2" * 40, None, datetime(2024, 5, 1, tzinfo=UTC), text)
    items = [FeedItem(RepoId("o", "n"), revision, [ChangeRecord(Kind.CARD, Severity.LOW, "README.md", text)], [])]
    meta = FeedMeta("tag:hubwatch,2025:feeds/t", "t", "s", "https://h/feed.atom", "https://h/")
    entries = feed_entries(items, "https://h")
    expected = f"o/n @ 2222222: card/low: {xml_safe(text)}"
    atom = "{http://www.w3.org/2005/Atom}"
    for body, title_path in ((atom_bytes(meta, entries), f"{atom}entry/{atom}title"),
                             (rss_bytes(meta, entries), "channel/item/title")):
        parsed = feedparser.parse(body)
        assert not parsed.bozo, parsed.get("bozo_exception")
        # exact text through a strict XML parser (feedparser "repairs" text that looks double-encoded)
        assert lxml.etree.fromstring(body).find(title_path).text == expected


def test_chart_ticks_are_round_labels_never_overlap_and_legend_has_latest_value() -> None:
    from hubwatch.feeds.builders.plots import NARROW_PX, WIDE_PX, nice_ticks

    assert nice_ticks(747.245) == [0, 200, 400, 600, 800] and nice_ticks(46.7) == [0, 20, 40, 60]
    assert nice_ticks(0.0) == [0.0, 1.0]
    labels = [f"{i:07x}" for i in range(60)]
    svg = line_chart("m", labels, [Series("LoRA", tuple(float(i) for i in range(60)))], fmt_count)
    found = re.findall(r'<text x="([\d.]+)%" y="[\d.]+" class="axis([ a-z-]*)" text-anchor="middle">', svg)
    narrow = [float(x) for x, where in found if where != " wide-only"]
    wide = [float(x) for x, where in found if where != " narrow-only"]
    assert len(narrow) < len(wide) < 60 and labels[-1] in svg  # thinned, the newest revision still labelled
    for xs, plot_px in ((narrow, NARROW_PX), (wide, WIDE_PX)):  # x is a percentage of the plot's width
        assert all((b - a) / 100 * plot_px >= 7 * 7.2 for a, b in zip(xs, xs[1:]))  # 7-character labels never touch
    assert "LoRA: 59" in svg and ">20<" in svg and ">60<" in svg  # latest value; round y ticks up to the max


def test_chart_text_keeps_its_size_at_any_width() -> None:
    """No viewBox on the outer svg (a user unit is a CSS px, so 12px text draws at 12px on a phone
    and on a desktop); x positions in per cent; the lines stretched in an inner svg."""
    from pathlib import Path

    import hubwatch.feeds

    svg = str(line_chart("m", ["a", "b"], [Series("s", (1.0, 2.0))], fmt_count))
    outer = svg[svg.index("<svg"):svg.index(">", svg.index("<svg")) + 1]
    assert 'width="100%"' in outer and "viewBox" not in outer and re.search(r'height="\d+"', outer)
    inner = re.search(r"<svg x=[^>]*>", svg)
    assert inner and 'preserveAspectRatio="none"' in inner.group(0)
    assert 'vector-effect="non-scaling-stroke"' in svg
    assert re.findall(r'<circle cx="([\d.]+)%"', svg) == ["8.00", "92.00"]
    deep = line_chart("m", [f"{i:07x}" for i in range(150)], [Series("s", tuple(float(i) for i in range(150)))], fmt_count)
    assert deep.count('r="1.5"') == 150 and 'r="3.5"' in svg  # a dense history draws dots, not a bar
    assert deep.index('class="axis tick"') > deep.rindex("<circle")  # tick labels over the lines
    css = (Path(hubwatch.feeds.__file__).parent / "static/style.css").read_text()
    rules: dict[str, str] = {}
    for selector, body in re.findall(r"([^{}]+?)\s*\{([^{}]*)\}", css):
        rules.setdefault(selector.strip(), body)  # the first (top-level) rule, not a media query's
    assert "width: 100%" in rules["svg.chart"] and "height" not in rules["svg.chart"]  # height: the attribute
    assert "12px" in rules["svg.chart .axis"]
    assert "overflow" not in rules[".charts"] and "minmax(0, 1fr)" in rules[".charts"]


def test_a_flat_chart_is_one_line_of_text() -> None:
    one = line_chart("Parameters per revision", ["a", "b", "c"], [Series("params", (6.74e9, 6.74e9, 6.74e9))],
                     fmt_count)
    assert "<svg" not in one and re.sub("<[^>]+>", "", one) == "params: 6.74 B at every revision"
    some = line_chart("Memory per method per revision", ["a", "b", "c"],
                      [Series("LoRA", (None, 2e9, 2e9)), Series("QLoRA", (None, 1e9, 1e9)), Series("x", (None,) * 3)],
                      fmt_count)
    assert re.sub("<[^>]+>", "", some) == (
        "Memory per method, at every revision with an estimate (2 of 3): LoRA 2.00 B · QLoRA 1.00 B")
    assert "<svg" in line_chart("m", ["a", "b"], [Series("s", (1.0, 1.0)), Series("t", (1.0, 2.0))], fmt_count)
    assert "the only revision" in line_chart("m", ["a"], [Series("s", (1.0,))], fmt_count)


def test_estimate_view_reads_the_typed_estimate() -> None:
    from hubwatch.estimator import MemorySettings
    from hubwatch.estimator.estimate import Memory
    from hubwatch.estimator.estimate_parts import CardFit, Params, PeakMemory

    estimate = Estimate("1.1.0", params=Params(7_000, checkpoint=7_010),
                        memory=Memory(MemorySettings(seq_len=1024), PeakMemory(full_finetune=2.5, kv_cache=0.25)),
                        cards=(CardFit("T4", 16, (("full", 0), ("lora", 3), ("serve", None))),))
    view = estimate_view(estimate)
    assert view is not None and view.params == 7_000 and view.checkpoint_params == 7_010
    assert view.memory == (("full fine-tune", 2_500_000_000), ("KV cache", 250_000_000))
    assert [(c.name, c.memory_gb, c.batches) for c in view.cards] == [
        ("T4", 16, (("full fine-tune", 0), ("LoRA", 3), ("serve", None)))]
    assert view.settings is not None and view.settings.startswith("method lora, seq_len 1024, batch 1")
    assert estimate_view(Estimate.from_json(estimate.to_json())) == view  # the same through the store's JSON
