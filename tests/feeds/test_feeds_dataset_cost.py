"""A dataset's pages show the cost of a fine-tune on it (issue 33): one epoch of a watched model on a config
and split of that revision (samples, estimated tokens, time, dollars) and how it moved against the parent
revision; a model, method, config or split is picked by a plain GET form; the link to the full /plan.
Through the real app and Store on the synthetic reviews history (train grows 100 → 150 rows at v3), on
SQLite and PostgreSQL."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient
from dataset_app import ds  # noqa: F401  (the fixture)
from feeds_seed import HOSTILE, LLAMA2, LLAMA3, make_settings
from reviews_seed import EVIL, HOSTILE_DATASET, REVIEWS, seed_reviews

from hubwatch.estimator.cards import card_by_name
from hubwatch.estimator.cost import RunShape, run_hours
from hubwatch.feeds import create_app
from hubwatch.feeds.text import fmt_amount
from hubwatch.storage import Store

PAGE = f"/datasets/{REVIEWS.hub_id}"


def _panel(page: str) -> str:
    start = page.index('<section class="estimate dataset-cost" id="cost">')
    return page[start:page.index("</section>", start)]


def _dd(panel: str, term: str) -> str:
    found = re.search(rf"<dt>{term}</dt><dd>(.*?)</dd>", panel, re.S)
    assert found, panel
    return found.group(1)


def _usd_text(panel: str) -> str:
    found = re.search(r"<strong>\$([\d,.]+)</strong>", _dd(panel, "Cost per epoch"))
    assert found, panel
    return found.group(1)


def _usd(panel: str) -> float:
    return float(_usd_text(panel).replace(",", ""))


def test_the_dataset_page_costs_an_epoch_of_the_first_watched_model(ds: tuple[TestClient, dict[str, str]]) -> None:
    client, shas = ds
    panel = _panel(client.get(PAGE).text)
    # the first watched model by org/name, LoRA, the default config's train split at the newest revision (v9)
    assert f'<option value="{HOSTILE}" selected>' in panel and '<option value="lora" selected>LoRA' in panel
    assert f'<option value="{LLAMA2}">' in panel and f'<option value="{LLAMA3}">' in panel
    assert '<option value="default" selected>' in panel and '<option value="train" selected>' in panel
    assert _dd(panel, "Samples per epoch").startswith("150 ")
    assert _dd(panel, "Tokens per sample").startswith("≈ 26 (estimated)")
    assert "3.90 K (estimated)" in _dd(panel, "Tokens per epoch")
    assert "GPU-hours on" in _dd(panel, "Time per epoch") and _usd(panel) > 0
    assert "Unchanged from the parent revision" in panel and shas["v8"][:7] in panel
    link = re.search(r'<a href="(/plan\?[^"]+)">The full plan of', panel)
    assert link
    plan = client.get(link.group(1).replace("&amp;", "&"))
    assert plan.status_code == 200 and "× 150 samples of 26 (estimated) tokens" in plan.text
    assert f"reviews@{shas['v9']}" in link.group(1).replace("%40", "@")


def test_the_cost_is_the_estimators_run_hours_of_the_plans_flops(ds: tuple[TestClient, dict[str, str]]) -> None:
    client, shas = ds
    query = {"model": str(LLAMA2), "method": "qlora"}
    panel = _panel(client.get(f"{PAGE}/revisions/{shas['v3']}?{urlencode(query)}").text)
    assert f'<option value="{LLAMA2}" selected>' in panel and '<option value="qlora" selected>QLoRA' in panel
    api = client.post("/api/v1/plan", json={"repo": str(LLAMA2), "dataset": f"{REVIEWS}@{shas['v3']}",
                                            "settings": {"method": "qlora"}}).json()
    cost = api["memory"]["cost"]
    hours, usd = run_hours(cost["flops"], card_by_name(cost["card"]), cost["cards"],
                           RunShape(utilisation=cost["utilisation"]))
    assert usd is not None and round(usd, 2) == cost["usd"]  # the API's figure, unrounded on the page
    assert f"<strong>${fmt_amount(usd)}</strong>" in panel
    assert f"{fmt_amount(hours * cost['cards'])} GPU-hours on {cost['cards']}× {cost['card']}" in panel


def test_a_revision_whose_rows_grew_costs_more_than_its_parent(ds: tuple[TestClient, dict[str, str]]) -> None:
    client, shas = ds
    grown = _panel(client.get(f"{PAGE}/revisions/{shas['v3']}").text)
    parent = _panel(client.get(f"{PAGE}/revisions/{shas['v2']}").text)
    assert _dd(grown, "Samples per epoch").startswith("150 ") and _dd(parent, "Samples per epoch").startswith("100 ")
    assert _usd(grown) > _usd(parent)
    change = re.search(r'<p class="cost-change">(.*?)</p>', grown, re.S)
    assert change, grown
    text = re.sub(r"<[^>]+>", "", change.group(1))
    assert f"Against the parent revision {shas['v2'][:7]}: train rows 100 → 150: cost per epoch " \
           f"${_usd_text(parent)} → ${_usd_text(grown)} (+50 %)." in text
    assert "Unchanged from the parent revision" in parent  # v1 → v2 converted the files, kept the rows
    assert "parent revision" not in _panel(client.get(f"{PAGE}/revisions/{shas['v1']}").text)  # the first
    # v4 keeps 150 train rows but their bytes grew: tokens per sample 25 → 26 moves the cost too
    tokens = _panel(client.get(f"{PAGE}/revisions/{shas['v4']}").text)
    assert "train rows 150 → 150, tokens per sample 25 → 26: cost per epoch" in re.sub(r"<[^>]+>", "", tokens)
    # the test split grew 20 → 30 at v4: picked by the form, its cost moves with it
    test = _panel(client.get(f"{PAGE}/revisions/{shas['v4']}?dataset_split=test").text)
    assert '<option value="test" selected>' in test
    assert "test rows 20 → 30" in re.sub(r"<[^>]+>", "", test)


def test_a_parent_without_the_config_says_so(ds: tuple[TestClient, dict[str, str]]) -> None:
    client, shas = ds
    # v6 added the `extra` config and made it the default: its 5 train rows; v5 had no such config
    panel = _panel(client.get(f"{PAGE}/revisions/{shas['v6']}").text)
    assert '<option value="extra" selected>' in panel and _dd(panel, "Samples per epoch").startswith("5 ")
    assert "has no cost to compare" in panel and "has no config &#39;extra&#39;" in panel
    default = _panel(client.get(f"{PAGE}/revisions/{shas['v6']}?dataset_config=default").text)
    assert _dd(default, "Samples per epoch").startswith("150 ") and "Unchanged from the parent revision" in default


@pytest.mark.parametrize(("query", "needle"), [
    ({"model": "nobody/nothing"}, "model: nobody/nothing is not watched by this hubwatch (watch it with "
                                  "`hubwatch watch add nobody/nothing`)"),
    ({"model": "datasets/a/b"}, "model: &#39;datasets/a/b&#39; is a dataset id"),
    ({"method": "serve"}, "method: &#39;serve&#39; has no training cost here (choose lora, qlora, full)"),
    ({"dataset_split": "validation"}, "dataset_split: datasets/hubwatch-test/reviews config &#39;default&#39; has no "
                                      "split &#39;validation&#39;"),
    ({"dataset_config": "nope"}, "dataset_config: datasets/hubwatch-test/reviews has no config &#39;nope&#39;"),
])
def test_what_cannot_be_costed_is_named_and_the_form_stays(ds: tuple[TestClient, dict[str, str]],
                                                           query: dict[str, str], needle: str) -> None:
    client, _ = ds
    page = client.get(f"{PAGE}?{urlencode(query)}")
    assert page.status_code == 200  # the dataset's page itself is fine
    panel = _panel(page.text)
    assert '<p class="estimate-error" role="alert"><strong>No cost:</strong> ' in panel and needle in panel, panel
    assert '<form class="estimate-form cost-form" method="get"' in panel


def test_a_split_without_rows_and_hostile_names_are_escaped(ds: tuple[TestClient, dict[str, str]]) -> None:
    client, _ = ds
    base = f"/datasets/{HOSTILE_DATASET.hub_id}"
    panel = _panel(client.get(base).text)
    assert "<script>" not in panel and "&lt;script&gt;" in panel
    assert f'<option value="train{EVIL.replace("<", "&lt;").replace(">", "&gt;")}" selected>' in panel
    assert _dd(panel, "Samples per epoch").startswith("10 ")
    nosize = _panel(client.get(f"{base}?dataset_split=nosize").text)
    assert "No cost:</strong> dataset_split:" in nosize and "the metadata states no rows" in nosize
    hostile = _panel(client.get(f"{base}?{urlencode({'model': EVIL, 'dataset_config': EVIL})}").text)
    assert "<script>" not in hostile and "No cost:</strong> model:" in hostile


def test_with_no_model_watched_the_panel_says_how_to_add_one(store: Store) -> None:
    seed_reviews(store, upto=3)
    with TestClient(create_app(make_settings(), store)) as client:
        for path in (PAGE, f"{PAGE}/revisions/{store.revisions.history_page(REVIEWS, limit=1)[0][0].revision.sha}"):
            panel = _panel(client.get(path).text)
            assert "No model is watched" in panel and "<code>hubwatch watch add ORG/NAME</code>" in panel
            assert "<form" not in panel
