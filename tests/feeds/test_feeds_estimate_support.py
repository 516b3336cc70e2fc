"""The stored estimate on the revision page and the model page's headline: the support level and its reason
next to the parameter number, and a "does not fit" that names the term that breaks the card, escaped."""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient
from feeds_seed import LLAMA2, Seeded, client, feeds_store, llama2_config, seeded  # noqa: F401

from hubwatch.estimator import Estimate
from hubwatch.estimator.memory.report import estimate_revision
from hubwatch.estimator.verdict import batch_one_misfits, estimate_verdicts, support_words
from hubwatch.feeds.builders.views import estimate_view


def _estimate_section(page: str) -> str:
    return page[page.index("<h2>Estimate</h2>"):]


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def test_the_revision_page_says_the_level_next_to_the_number(client: TestClient, seeded: Seeded) -> None:
    page = client.get(f"/models/{LLAMA2}/revisions/{seeded.shas[LLAMA2][-1]}").text
    section = _estimate_section(page)
    found = re.search(r"<dt>Parameters</dt><dd>(.*?)</dd>", section, re.S)
    assert found, section[:500]
    assert _text(found.group(1)) == "6.74 B modelled — every mechanism the config describes is read; expected within 1%"
    assert 'class="support support-modelled"' in found.group(1)


def test_the_revision_page_names_the_term_that_breaks_each_card(client: TestClient, seeded: Seeded) -> None:
    stored = estimate_revision(llama2_config())  # what the seed stored: LoRA, batch 1
    misfits = [v for v in estimate_verdicts(stored) if not v.fits]
    assert misfits and all(v.term for v in misfits)
    page = client.get(f"/models/{LLAMA2}/revisions/{seeded.shas[LLAMA2][0]}").text
    section = _estimate_section(page)
    listed = [_text(li) for li in re.findall(r'<li class="nofit">(.*?)</li>', section, re.S)]
    assert listed == [f"lora at batch 1 {v.line}" for v in misfits]
    breaks = batch_one_misfits(stored)
    t4_full = breaks[("T4", "full")]
    row = next(r for r in re.findall(r"<tr>(.*?)</tr>", section, re.S) if r.startswith("<td>T4"))
    cells = [_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    assert cells[0] == f"T4 16 GB (budget {t4_full.budget_gb:.1f} GB)"
    assert cells[1] == f"does not fit: {t4_full.short}" and t4_full.term.replace("_", " ") in cells[1]


def test_the_model_page_headline_gives_the_level(client: TestClient, seeded: Seeded) -> None:
    page = client.get(f"/models/{LLAMA2}").text
    head = page[page.index('<div class="verdict">'):]
    found = re.search(r'6\.74 B parameters <span class="support support-(\w+)" title="([^"]*)">(\w+)</span>', head)
    assert found and found.group(1) == found.group(3) == "modelled"
    assert html.unescape(found.group(2)).endswith("expected within 1%")


def test_a_stored_reason_is_escaped_on_the_revision_page() -> None:
    """A guess's words carry the config's own text: the view keeps it as text; the template escapes it."""
    hostile = {**llama2_config(), "model_type": "<img src=x onerror=alert(1)>", "architectures": ["XForCausalLM"]}
    stored = Estimate.from_json(estimate_revision(hostile).to_json())
    view = estimate_view(stored)
    assert view is not None and view.support is not None and view.support.level == "approximate"
    assert "<img src=x onerror=alert(1)>" in view.support.text
    from hubwatch.feeds.templating import make_templates

    env = make_templates("http://hubwatch.test").env
    table = getattr(env.get_template("macros.html").make_module({"base_path": ""}), "estimate_table")(view)
    assert "<img" not in str(table) and "&lt;img src=x onerror=alert(1)&gt;" in str(table)
    assert 'class="support support-approximate"' in str(table)
    assert support_words(stored.params.support if stored and stored.params else None) == view.support


def test_the_markdown_twin_says_the_level_and_the_term(client: TestClient, seeded: Seeded) -> None:
    text = client.get(f"/models/{LLAMA2}.md").text
    assert ("params 6.74 B (modelled — every mechanism the config describes is read; expected within 1%)") in text
    stored = estimate_revision(llama2_config())
    t4 = next(v for v in estimate_verdicts(stored) if v.card == "T4")
    assert not t4.fits and f"\n- lora at batch 1 {t4.line}\n" in text, text[:2000]
