"""The web app in a real Chromium: clicking from the index to a model, a revision and an advisory
(and a compare and /plan where the app has them), at 400 and 1280 px, with a screenshot of every
page visited (test-artifacts/screenshots/) and no page wider than the window; charts legible at
400 px; the keyboard reaches the main links in order with a visible focus ring; hostile remote
content stays inert with and without the CSP.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.register_assert_rewrite("browser_site")  # imported here first, then as the plugin below
from browser_site import HOSTILE_REPO, WIDTHS, Site  # noqa: E402

# The fixtures (site, browser, artifacts) come from browser_site as a plugin, registered once for
# every module here (no conftest: its name is shared; an import per module would start one site each).
pytest_plugins = ("browser_site",)

MIN_CHART_TEXT_PX = 11.0

# Everything a page could do with the payloads, read back from the live DOM.
_DOM_REPORT = """() => {
  const handlers = [];
  for (const el of document.querySelectorAll('*')) {
    for (const attr of el.attributes) {
      if (attr.name.toLowerCase().startsWith('on')) handlers.push(el.tagName + ' ' + attr.name);
    }
  }
  const scriptish = [...document.querySelectorAll('[href],[src],[action],[formaction]')]
    .map(el => el.getAttribute('href') || el.getAttribute('src') || el.getAttribute('action') || el.getAttribute('formaction'))
    .filter(v => /^\\s*(javascript|data|vbscript):/i.test(v || ''));
  return {
    pwned: window.__pwned === undefined ? null : String(window.__pwned),
    scripts: document.querySelectorAll('script').length,
    iframes: document.querySelectorAll('iframe,object,embed').length,
    handlers,
    scriptish,
  };
}"""

_CHART_TEXT = """() => [...document.querySelectorAll('svg.chart text')]
  .filter(t => t.getClientRects().length > 0 && getComputedStyle(t).display !== 'none')
  .map(t => ({text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a}))"""


_FOCUSED = """() => { const el = document.activeElement; const s = getComputedStyle(el);
  return {tag: el.tagName, type: el.getAttribute('type'), href: el.getAttribute('href'), text: el.textContent.trim().slice(0, 40),
          outline: s.outlineStyle, width: parseFloat(s.outlineWidth) || 0, visible: el.matches(':focus-visible')}; }"""


_INERT: dict[str, Any] = {"pwned": None, "scripts": 0, "iframes": 0, "handlers": [], "scriptish": []}


class Visitor:
    """One browser context at one width; every page it opens is screenshotted and checked."""

    def __init__(self, context: Any, site: Site, width: int, shots: Path | None, label: str) -> None:
        context.set_default_timeout(5000)
        self.page = context.new_page()
        self.site, self.width, self.shots, self.label = site, width, shots, label
        self.dialogs: list[str] = []
        self.visited: list[str] = []
        self.chart_texts = 0
        self.page.on("dialog", self._dialog)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def goto(self, path: str) -> None:
        response = self.page.goto(self.site.url + path)
        assert response is not None and response.status == 200, (path, response and response.status)
        self.check()

    def click(self, selector: str) -> None:
        """Follow the first link matching `selector` the way a user does (a click), then check."""
        link = self.page.locator(selector).first
        link.scroll_into_view_if_needed()
        with self.page.expect_navigation():
            link.click()
        self.check()

    def check(self) -> None:
        page = self.page
        page.wait_for_load_state("load")
        path = urlsplit(page.url).path
        self.visited.append(path)
        name = re.sub(r"[^A-Za-z0-9]+", "_", path).strip("_")[:80] or "index"
        if self.shots is not None:
            page.screenshot(path=str(self.shots / f"{self.label}-{name}-{self.width}.jpg"), full_page=True, quality=80)
            if page.locator("section.charts").count():  # the charts alone, to look at without scrolling
                page.locator("section.charts").screenshot(
                    path=str(self.shots / f"{self.label}-{name}-charts-{self.width}.png"))
        wide = page.evaluate(
            """() => [...document.querySelectorAll('main *')].filter(el => {
                 const r = el.getBoundingClientRect();
                 return r.width > 0 && r.right > window.innerWidth + 0.5;
               }).slice(0, 5).map(el => el.tagName + '.' + el.className + ' ' + Math.round(el.getBoundingClientRect().right))"""
        )
        widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1], f"{path} at {self.width}px is {widths[0]}px wide (horizontal overflow): {wide}"
        # Overflow clipped by a scrolling box (a <pre>) is fine; what sticks out of the page is not.
        clipped = page.evaluate(
            """() => [...document.querySelectorAll('main *')].filter(el => {
                 const r = el.getBoundingClientRect();
                 if (r.width === 0 || r.right <= window.innerWidth + 0.5) return false;
                 for (let p = el.parentElement; p; p = p.parentElement) {
                   const s = getComputedStyle(p);
                   if (['auto', 'scroll', 'hidden', 'clip'].includes(s.overflowX)) {
                     return p.getBoundingClientRect().right > window.innerWidth + 0.5;
                   }
                 }
                 return true;
               }).length"""
        )
        assert clipped == 0, f"{path} at {self.width}px: elements past the window's right edge: {wide}"
        small = [t for t in page.evaluate(_CHART_TEXT) if t["px"] < MIN_CHART_TEXT_PX]
        assert not small, f"{path}: chart text under {MIN_CHART_TEXT_PX}px at {self.width}px: {small[:5]}"
        self.chart_texts += len(page.evaluate(_CHART_TEXT))
        report = page.evaluate(_DOM_REPORT)
        assert report["pwned"] is None, f"{path}: a payload ran (window.__pwned = {report['pwned']})"
        assert self.dialogs == [], f"{path}: a dialog opened: {self.dialogs}"
        assert report == _INERT, f"{path}: script, handlers or scriptable URLs in the DOM: {report}"


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def visitor(request: pytest.FixtureRequest, browser: Any, site: Site, artifacts: Path) -> Iterator[Visitor]:
    width: int = request.param
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        yield Visitor(context, site, width, artifacts, "walk")
    finally:
        context.close()


def test_click_from_the_index_to_a_model_a_revision_and_an_advisory(visitor: Visitor) -> None:
    page = visitor.page
    visitor.goto("/")
    assert page.locator("h1").inner_text() == "Watched models and datasets"

    visitor.click('a[href="/models/meta-llama/Llama-2-7b-hf"]')
    assert page.locator("h1").inner_text() == "meta-llama/Llama-2-7b-hf"
    # the demo's parameter count never changes: one line of text, not a flat chart
    flat = page.locator("p.chart-flat").first.inner_text()
    assert flat == "parameters: 6.74 B at every revision", flat

    visitor.click(".revision a.sha")  # the newest revision
    assert re.search(r"/revisions/[0-9a-f]{40}$", page.url)
    revision = urlsplit(page.url).path

    visitor.click('a[href^="/advisories/"]')
    assert urlsplit(page.url).path.startswith("/advisories/")
    assert page.locator(f'a[href="{revision}"]').count(), "the advisory links back to its revision"

    visitor.click(f'a[href="{revision.split("/revisions/")[0]}"]')  # back to the model (crumbs)
    visitor.click(".revision >> nth=3 >> a.sha")  # an older revision
    visitor.click('a:text("compare with latest")')
    assert re.search(r"/compare/[0-9a-f]{7,40}\.\.\.[0-9a-f]{7,40}$", page.url), page.url
    assert page.locator("h1").count() == 1


def test_paste_a_config_into_plan(visitor: Visitor) -> None:
    """/plan: paste a config.json, submit the form (a POST), read the estimate."""
    page = visitor.page
    visitor.goto("/")
    visitor.goto("/plan")
    config = (Path(__file__).parent.parent / "data/configs/meta-llama__Llama-2-7b-hf/config.json").read_text()
    page.locator("textarea[name=config]").fill(config)
    with page.expect_navigation():
        page.locator('form.plan-form button[type="submit"]').click()
    visitor.check()
    assert "6.74 B" in page.locator("main").inner_text()


def test_every_page_of_the_walk_at_both_widths(visitor: Visitor) -> None:
    """The other pages a user reaches from the index: an org, the other models and their newest revisions."""
    visitor.goto("/orgs/meta-llama")
    for repo in visitor.site.repos[1:]:  # the first is the click test's
        visitor.goto(f"/models/{repo}")
        visitor.click(".revision a.sha")
    assert visitor.chart_texts > 0, "no chart was drawn on any model page"


def test_the_keyboard_reaches_the_main_links_in_order(browser: Any, site: Site) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        context.set_default_timeout(5000)
        page = context.new_page()
        page.goto(site.url + "/")
        reached: list[dict[str, Any]] = []
        for _ in range(30):
            page.keyboard.press("Tab")
            reached.append(page.evaluate(_FOCUSED))
        hrefs = [r["href"] for r in reached]
        header = page.eval_on_selector_all("header.top a", "els => els.map(a => a.getAttribute('href'))")
        assert header[:2] == ["/", "/"] and len(header) >= 4, header  # the brand, "Models", …
        assert hrefs[:len(header)] == header, hrefs  # first the header's links, in order
        expected = page.evaluate(
            "() => [...document.querySelectorAll('td.model a')].map(a => a.getAttribute('href'))")
        in_table = [h for h in hrefs if h in expected]
        assert in_table == expected[:len(in_table)] and len(in_table) >= 4, (in_table, expected)  # row by row
        first_row = hrefs.index(expected[0])
        # between the header and the table only the page's own controls (the filter form), no stray link
        between = reached[len(header):first_row]
        assert all(r["tag"] in {"INPUT", "SELECT", "BUTTON", "TEXTAREA"} for r in between), between
        # every stop shows where it is (a date input's calendar button is drawn by the browser itself)
        unringed = [r for r in reached if r["type"] != "date" and r["tag"] != "BODY"
                    and not (r["visible"] and r["outline"] not in {"none", ""} and r["width"] >= 2)]
        assert not unringed, unringed
        models = [h for h in in_table if h.startswith("/models/")]
        # Enter follows the focused link
        while page.evaluate("() => document.activeElement.getAttribute('href')") != models[0]:
            page.keyboard.press("Shift+Tab")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert urlsplit(page.url).path == models[0]
        # on the model page, Tab reaches the revision links after the page's own links
        tabbed: list[str | None] = []
        for _ in range(40):
            page.keyboard.press("Tab")
            tabbed.append(page.evaluate("() => document.activeElement.getAttribute('href')"))
        revisions = [h for h in tabbed if h and "/revisions/" in h]
        assert revisions, tabbed
        target = revisions[0]
        while page.evaluate("() => document.activeElement.getAttribute('href')") != target:
            page.keyboard.press("Shift+Tab")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert urlsplit(page.url).path == target
    finally:
        context.close()


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["with-csp", "without-csp"])
def test_hostile_content_stays_inert(browser: Any, site: Site, artifacts: Path, bypass_csp: bool) -> None:
    """Card, licence, config and chat template all hold script, onerror and javascript: payloads;
    no script runs, no dialog opens, no handler or scriptable URL reaches the DOM, with the CSP and
    with the browser told to ignore it."""
    context = browser.new_context(viewport={"width": 400, "height": 900}, bypass_csp=bypass_csp)
    try:
        visitor = Visitor(context, site, 400, None if bypass_csp else artifacts, "hostile")
        page = visitor.page
        visitor.goto(f"/models/{HOSTILE_REPO}")
        revisions = list(dict.fromkeys(
            page.eval_on_selector_all('a[href*="/revisions/"]', "els => els.map(a => a.getAttribute('href'))")
        ))
        assert len(revisions) >= 3, revisions
        advisories: list[str] = []
        shown: list[str] = []
        for path in revisions:
            visitor.goto(path.split("#")[0])
            advisories += page.eval_on_selector_all(
                'a[href^="/advisories/"]', "els => els.map(a => a.getAttribute('href'))")
            shown.append(page.locator("main").inner_text())
            for link in page.locator("main a").all():
                href = link.get_attribute("href") or ""
                assert not href.lower().startswith("javascript:"), href
        assert advisories, "the hostile repo should have advisories"
        assert any("<script>" in text and "onerror=" in text for text in shown), "the payloads show, as text"
        for source in ("licence", "card tags", "architectures", "chat_template", "eos_token", "modeling_evil.py"):
            assert any(source in text for text in shown), f"no hostile {source} change on any revision page"
        oldest, newest = (r.split("/revisions/")[1][:12] for r in (revisions[-1], revisions[0]))
        visitor.goto(f"/models/{HOSTILE_REPO}/compare/{oldest}...{newest}")  # both chat templates in full
        for path in dict.fromkeys(advisories):
            visitor.goto(path)
        for path in (f"/models/{HOSTILE_REPO}.md", f"/models/{HOSTILE_REPO}/feed.atom",
                     f"/models/{HOSTILE_REPO}/feed.rss", f"/models/{HOSTILE_REPO}/feed.json"):
            page.goto(site.url + path)
            page.wait_for_timeout(50)
            report = page.evaluate(_DOM_REPORT)
            assert report == _INERT and visitor.dialogs == [], (path, report, visitor.dialogs)
        assert len(visitor.visited) >= 1 + len(revisions) + 1 and visitor.dialogs == []
    finally:
        context.close()
