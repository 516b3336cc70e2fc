"""Watched datasets in a real Chromium (issue 33), at 400 and 1280 px: from the index's dataset row
(tagged "dataset") to the dataset's page, a revision with dataset changes and the compare page of
two of its revisions (its facts at both sides); from a model card's `datasets:` to the dataset's page. Every page is
screenshotted (test-artifacts/screenshots/datasets-*) and checked by the walk's Visitor: no
horizontal overflow, no script; here also the facts panel in view and the change list readable
(each change's heading and summary shown at a legible size, inside the window)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.register_assert_rewrite("browser_site")  # imported here first, then as the plugin below
from browser_site import HOSTILE_REPO, WIDTHS, Site  # noqa: E402
from test_browser_pages import Visitor

# The fixtures (site, browser, artifacts) come from browser_site as a plugin, registered once for
# every module here (no conftest: its name is shared; an import per module would start one site each).
pytest_plugins = ("browser_site",)

REVIEWS = "/datasets/hubwatch-test/reviews"
MIN_TEXT_PX = 12.0

_BOXES = """sel => [...document.querySelectorAll(sel)].map(el => { const r = el.getBoundingClientRect();
  return {text: el.innerText.trim().slice(0, 60), left: r.left, right: r.right, width: r.width, height: r.height,
          px: parseFloat(getComputedStyle(el).fontSize), shown: el.getClientRects().length > 0}; })"""


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def visitor(request: pytest.FixtureRequest, browser: Any, site: Site, artifacts: Path) -> Iterator[Visitor]:
    width: int = request.param
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        yield Visitor(context, site, width, artifacts, "datasets")
    finally:
        context.close()


def _readable(visitor: Visitor, selector: str, least: int) -> list[str]:
    """The texts of `selector`'s elements, after checking there are at least `least`, each drawn,
    inside the window and at a legible size; their texts are returned for the caller to read."""
    boxes = visitor.page.evaluate(_BOXES, selector)
    assert len(boxes) >= least, (selector, len(boxes))
    for box in boxes:
        where = f"{selector} {box['text']!r} at {visitor.width}px"
        assert box["shown"] and box["width"] > 0 and box["height"] > 0, where
        assert box["left"] >= -0.5 and box["right"] <= visitor.width + 0.5, (where, box)
        assert box["px"] >= MIN_TEXT_PX, (where, box["px"])
        assert box["text"], where
    return [b["text"] for b in boxes]


def _facts_in_view(visitor: Visitor) -> str:
    """The facts panel: shown, inside the window, its text."""
    panel = visitor.page.locator("section#dataset")
    assert panel.count() == 1 and panel.is_visible()
    _readable(visitor, "section#dataset dl.estimate dt", 4)
    _readable(visitor, "section#dataset dl.estimate dd", 4)
    return str(panel.inner_text())


def test_from_the_index_to_a_dataset_a_revision_and_a_compare(visitor: Visitor) -> None:
    page = visitor.page
    visitor.goto("/")
    tagged = page.locator("td.model:has(.badge.repo-type)")
    assert tagged.count() == 2  # the two watched datasets, and no model
    assert sorted(tagged.locator('a[href^="/datasets/"]').evaluate_all("els => els.map(a => a.getAttribute('href'))")) == [
        "/datasets/hubwatch-test/reviews", "/datasets/stanfordnlp/imdb"]
    _readable(visitor, "td.model .badge.repo-type", 2)
    visitor.goto("/?type=dataset")
    assert page.locator("h1").inner_text() == "Watched datasets" and page.locator("td.model").count() == 2

    visitor.click(f'td.model a[href="{REVIEWS}"]')
    assert page.locator("h1").inner_text() == "datasets/hubwatch-test/reviews"
    facts = _facts_in_view(visitor)
    assert "Licence" in facts and "Rows" in facts and "Config" in facts
    lines = _readable(visitor, "ol.revisions li.revision", 9)
    assert any("Rename text to review" in line for line in lines), lines

    visitor.click('li.revision:has-text("Rename text to review") a.sha')
    assert re.search(r"/revisions/[0-9a-f]{40}$", page.url), page.url
    headings = _readable(visitor, "section.change h3", 3)
    assert any("schema" in h for h in headings) and any("splits" in h for h in headings), headings
    _readable(visitor, "section.change > p", 3)
    assert "review" in page.locator("main").inner_text()
    _facts_in_view(visitor)

    visitor.click('a:text("compare with latest")')
    assert re.search(rf"{REVIEWS}/compare/[0-9a-f]{{7,40}}\.\.\.[0-9a-f]{{7,40}}$", page.url), page.url
    headings = _readable(visitor, "section.change h3", 4)
    kinds = {k for h in headings for k in ("schema", "splits", "data_files", "licence", "gating") if k in h}
    assert {"schema", "data_files"} <= kinds, headings  # a relabel, shards re-uploaded since, …
    _readable(visitor, "section.change > p", 4)
    assert page.locator("section#dataset").is_visible()  # the facts at BASE and HEAD, not a model's estimate
    cells = _readable(visitor, "section#dataset table.dataset-deltas td", 15)
    assert cells[:3] == ["Rows in all", "190", "180"], cells
    assert page.locator("h1").count() == 1


def test_every_dataset_page_and_a_cards_link_to_its_dataset(visitor: Visitor) -> None:
    """The other dataset (real metadata), its newest revision, and a model card naming both."""
    page = visitor.page
    visitor.goto("/datasets/stanfordnlp/imdb")
    assert "Rows" in _facts_in_view(visitor)
    visitor.click("li.revision a.sha")
    _facts_in_view(visitor)

    visitor.goto(f"/models/{HOSTILE_REPO}")
    named = page.locator("p.card-datasets")
    assert named.is_visible()
    _readable(visitor, "p.card-datasets", 1)
    text = named.inner_text()
    assert "allenai/c4" in text and "not watched here" in text and "<script>" in text  # the payload, as text
    external = page.locator('p.card-datasets a.external[href="https://huggingface.co/datasets/allenai/c4"]')
    assert external.count() == 1
    visitor.click(f'p.card-datasets a.card-dataset[href="{REVIEWS}"]')
    assert urlsplit(page.url).path == REVIEWS
    assert page.locator("h1").inner_text() == "datasets/hubwatch-test/reviews"
