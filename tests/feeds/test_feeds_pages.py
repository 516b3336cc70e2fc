"""HTML pages and the Markdown twin: content, links, plots, and hostile text escaped."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from feeds_seed import HOSTILE, LLAMA2, Seeded, client, feeds_store, llama2_config, seeded  # noqa: F401

from hubwatch.estimator.memory.report import estimate_revision
from hubwatch.feeds.text import fmt_bytes


def _peaks() -> dict[str, str]:
    """Peak memory per method as the pages show it, from the estimator itself."""
    memory_gb = estimate_revision(llama2_config()).to_json()["memory_gb"]
    return {method: fmt_bytes(gb * 1e9) for method, gb in memory_gb.items() if gb is not None}


def test_index_lists_watched_repos_with_state_and_latest_change(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    html = response.text
    for repo in ("meta-llama/Llama-2-7b-hf", "meta-llama/Llama-3.1-8B-Instruct", "evil-org/hostile"):
        assert f'href="/models/{repo}"' in html
    assert "max_position_embeddings 2048 → 4096" in html
    assert "2023-07-25 12:00 UTC" in html  # last poll of Llama-2
    assert "script-src" not in response.headers["content-security-policy"]  # default-src 'none': no script
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "//cdn" not in html and client.get("/static/style.css").status_code == 200


def test_model_page_lists_revisions_newest_first_with_estimates_and_plots(client: TestClient, seeded: Seeded) -> None:
    html = client.get(f"/models/{LLAMA2}").text
    shas = seeded.shas[LLAMA2]
    positions = [html.index(f'id="r-{s}"') for s in reversed(shas)]
    assert positions == sorted(positions)
    peaks = _peaks()
    assert "6.74 B" in html and peaks["lora"] in html and peaks["full_finetune"] in html
    assert "<h3>Largest batch per card</h3>" in html and "H100-80GB" in html
    assert html.count('<section class="estimate" id="estimate">') == 1  # the newest one only, never repeated
    assert html.count('<table class="list cards">') == 1 and "Estimate at the latest revision" not in html  # no repeat
    assert html.count("<table") == html.count("<table", 0, html.index('<ol class="revisions">'))  # one line a revision
    # the seeded history never changes its parameters or memory: one line each, no flat chart
    assert html.count('<p class="chart-flat">') == 2 and "<svg" not in html
    assert "parameters: <strong>6.74 B</strong> at every revision" in html
    head = html[html.index('<div class="verdict">'):html.index("</div>", html.index('<div class="verdict">'))]
    assert f'href="/models/{LLAMA2}/revisions/{shas[-1]}"' in head and "6.74 B parameters" in head
    assert ('class="pin pin-bad">A pin at the latest revision carries 2 hazards (worst: high)'
            f' — move to <a href="/models/{LLAMA2}/revisions/{shas[1]}"><code>{shas[1][:7]}</code></a>.') in head
    # each with its severity, most severe first, without the repeated repo name
    assert head.index('<span class="badge sev-high">') < head.index('<span class="badge sev-medium">')
    assert ">— eos_token_id became a list</span>" in head
    assert 'class="badge sev-high"' in html and "eos_token_id 2 → [2, 32000]" in html
    assert f'href="/advisories/x_HUBWATCH-2023-' in html
    assert client.get("/models/nobody/nothing").status_code == 404


def test_revision_page_shows_old_new_rendered_diff_and_advisories(client: TestClient, seeded: Seeded) -> None:
    shas = seeded.shas[LLAMA2]
    html = client.get(f"/models/{LLAMA2}/revisions/{shas[1][:8]}").text
    assert "Rendered prompt diff: multi_turn" in html and 'class="add"' in html
    # the replaced rendered line marks just what changed, escaped: the added BOS token
    assert '<span class="sign">+</span><mark>&lt;s&gt;</mark>[INST] hi [/INST]</span>' in html
    assert "old: error: UndefinedError → new: ok" in html and "Text diff" in html
    assert "transformers_version 4.31.0 → 4.32.0" in html
    assert "-fix" in html  # the fix advisory raised here
    context = client.get(f"/models/{LLAMA2}/revisions/{shas[3]}").text
    assert "Unified diff" in context
    assert '<code class="old" title="old">2048</code> → <code class="new" title="new">4096</code>' in context
    assert context.count('href="/advisories/') >= 2  # affecting: eos + context
    # what a reader needs first, above the changes: is a pin here affected, and the hub commit
    verdict = context[context.index('<div class="verdict">'):context.index("<h2>Changes</h2>")]
    assert 'class="pin pin-bad"' in verdict and "A pin here carries 2 hazards (worst: high)" in verdict
    assert f'— move to <a href="/models/{LLAMA2}/revisions/{shas[1]}"><code>{shas[1][:7]}</code></a>' in verdict
    assert f'/commit/{shas[3]}">View this commit on the hub' in verdict and 'class="badge sev-medium"' in verdict
    fixed = client.get(f"/models/{LLAMA2}/revisions/{shas[1]}").text
    assert '<span class="badge fix">update</span> 1 update: pins before this revision lack it' in fixed
    fix_id = next(a.id for a in seeded.advisories.values() if a.repo == LLAMA2 and a.id.endswith("-fix"))
    resolved = fixed[fixed.index("Moving a pin to this revision resolves 1 advisory:"):fixed.index("</div>", fixed.index('<div class="verdict">'))]
    assert f'href="/advisories/{fix_id}"' in resolved
    assert "resolves" not in context  # nothing names the context change's revision as a fix
    missing = client.get(f"/models/{LLAMA2}/revisions/{'f' * 40}")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_advisory_page(client: TestClient, seeded: Seeded) -> None:
    adv = next(a for a in seeded.advisories.values() if a.repo == LLAMA2 and not a.id.endswith("-fix"))
    html = client.get(f"/advisories/{adv.id}").text
    assert adv.id in html and f"/v1/vulns/{adv.id}" in html and "introduced" in html
    # in words, first: which pins are affected, each revision a link to its diff
    assert f'class="pin pin-bad">Not fixed: a pin at <a href="/models/{LLAMA2}/revisions/{adv.revision_sha}">' in html
    fix = next(a for a in seeded.advisories.values() if a.repo == LLAMA2 and a.id.endswith("-fix"))
    fixed = client.get(f"/advisories/{fix.id}").text
    assert f'class="pin pin-ok">Fixed upstream in <a href="/models/{LLAMA2}/revisions/{fix.revision_sha}">' in fixed
    assert "a pin from the first revision up to (not including) that revision is affected" in fixed
    assert client.get("/advisories/x_nope").status_code == 404


def test_hostile_text_is_escaped_in_html(client: TestClient, seeded: Seeded) -> None:
    sha = seeded.shas[HOSTILE][0]
    adv = next(a for a in seeded.advisories.values() if a.repo == HOSTILE)
    for path in ("/", f"/models/{HOSTILE}", f"/models/{HOSTILE}/revisions/{sha}", f"/advisories/{adv.id}"):
        html = client.get(path).text
        assert "<script>" not in html, path
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, path
        assert not any(c in html for c in "\x01\x07\x1b"), path
    # a stored estimate's error is remote text too (the revision page shows what was stored)
    assert "unknown architecture &lt;b&gt;x&lt;/b&gt;" in client.get(f"/models/{HOSTILE}/revisions/{sha}").text


def test_markdown_twin(client: TestClient, seeded: Seeded) -> None:
    response = client.get(f"/models/{LLAMA2}.md")
    assert response.headers["content-type"].startswith("text/markdown")
    text = response.text
    assert text.startswith("# meta-llama/Llama-2-7b-hf\n")
    shas = seeded.shas[LLAMA2]
    heads = [text.index(f"## {s[:7]}") for s in reversed(shas)]
    assert heads == sorted(heads)
    assert "**context/medium** `config.json:max_position_embeddings`" in text
    assert "params 6.74 B" in text and f"LoRA {_peaks()['lora']}" in text
    assert re.search(r"^\| H100-80GB \| \d+ \| \d+ \| \d+ \| \d+ \|$", text, re.M)
    assert "(https://hubwatch.example/advisories/x_HUBWATCH-2023-" in text
    assert "ETag" in {k.title() for k in response.headers} or "etag" in response.headers
    hostile = client.get(f"/models/{HOSTILE}.md").text
    assert "<script>" not in hostile and "&lt;script&gt;" in hostile and "\x01" not in hostile
    assert client.get("/models/nobody/nothing.md").status_code == 404


def test_summarised_values_show_as_one_line() -> None:
    from hubwatch.feeds.templating import make_templates

    brief = make_templates("http://x").env.filters["summarised"]
    long = {"summarised": True, "type": "str", "chars": 2091, "sha256": "51fde193d3c30371685f", "head": "{% if"}
    assert brief(long) == "long value (2,091 characters, sha256 51fde193d3c3…)"
    assert brief(2048) is None and brief({"summarised": "yes"}) is None and brief(None) is None
    inline = make_templates("http://x").env.filters["inline"]
    assert inline("4096") == '"4096"' and inline(4096) == "4096" and inline(None) == "null"
    assert inline("a\tb\n") == '"a\\tb\\n"'  # whitespace that matters stays visible
    assert inline("x" * 200) is None and inline(set()) is None


def test_advisory_lines_drop_the_repo_prefix_and_sort_by_severity(seeded: Seeded) -> None:
    from dataclasses import replace

    from hubwatch.feeds.templating import make_templates

    lines = make_templates("http://x").env.filters["advisory_lines"]
    advisories = [a for a in seeded.advisories.values() if a.repo == LLAMA2]
    prefixed = [replace(a, osv={**a.osv, "summary": f"{a.repo}: kind/sev: text {a.id}"}) for a in advisories]
    rows = lines(prefixed)
    assert [text for _, _, text in rows] == [f"kind/sev: text {a.id}" for a, _, _ in rows]
    ranks = [sev.rank if sev else -1 for _, sev, _ in rows]
    assert ranks == sorted(ranks, reverse=True) and len(set(ranks)) > 1


def test_a_browser_gets_errors_as_a_page_and_an_api_client_as_json(client: TestClient) -> None:
    browser = {"accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    page = client.get("/models/nobody/nothing", headers=browser)
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "<h1>404: not found</h1>" in page.text and "nobody/nothing is not watched" in page.text
    assert "script-src" not in page.headers["content-security-policy"]
    hostile = client.get("/advisories/x_<script>alert(1)</script>", headers=browser)
    assert hostile.status_code == 404 and "<script>" not in hostile.text and "&lt;script&gt;" in hostile.text
    api = client.get("/models/nobody/nothing")
    assert api.headers["content-type"] == "application/json" and api.json()["error"]["code"] == "not_found"
