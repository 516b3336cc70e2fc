"""`/plan`, the model page's settings form and `POST /api/v1/plan` cost a run on a watched dataset (issue 33):
`dataset` (ORG/NAME or datasets/ORG/NAME, optionally @REV), `dataset_config`, `dataset_split` take the run's
samples per epoch and estimated tokens per sample from the STORED dataset revision, as `hubwatch estimate
--dataset` takes them from the hub; bad datasets, configs and splits are named; hostile names escaped.
Through the real app and Store, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape
from dataset_app import ds  # noqa: F401  (the fixture)
from feeds_seed import LLAMA2, make_settings
from reviews_seed import EVIL, REVIEWS

from hubwatch.domain.records import RepoId
from hubwatch.feeds import create_app
from hubwatch.storage import Store


def _plan(client: TestClient, **fields: str) -> Any:
    return client.get(f"/plan?{urlencode({'repo': str(LLAMA2), **fields})}")


def _cost(page: str) -> str:
    start = page.index('id="cost"')
    return page[start:page.index("<h3>Lint findings</h3>", start)]


def test_plan_takes_samples_and_tokens_from_the_stored_dataset_revision(ds: tuple[TestClient, dict[str, str]]) -> None:
    client, shas = ds
    newest = _plan(client, dataset="hubwatch-test/reviews")
    assert newest.status_code == 200, newest.text[:2000]
    cost = _cost(newest.text)
    # v9, the newest stored revision: default/train has 150 rows of 15,500 bytes → ≈ 26 tokens each (estimated)
    assert f'href="/datasets/hubwatch-test/reviews/revisions/{shas["v9"]}"' in cost
    assert "<code>default</code> / <code>train</code>" in cost and "(the newest stored revision)" in cost
    assert "× 150 samples of 26 (estimated) tokens" in cost and "≈ 26 (estimated)" in cost
    assert "README.md: default/train num_examples" in cost and "the split&#39;s rows" in cost
    # the datasets/ form and a revision after @ (a prefix of a stored commit): v1 had 100 rows
    first = _plan(client, dataset=f"datasets/hubwatch-test/reviews@{shas['v1'][:10]}")
    assert first.status_code == 200 and "× 100 samples of 25 (estimated) tokens" in _cost(first.text)
    assert "(the newest stored revision)" not in _cost(first.text)
    # another config and split of one revision: v6 made `extra` (5 train rows) the default
    extra = _plan(client, dataset=f"hubwatch-test/reviews@{shas['v6']}")
    assert "× 5 samples" in _cost(extra.text)
    test = _plan(client, dataset=f"hubwatch-test/reviews@{shas['v6']}", dataset_config="default",
                 dataset_split="test")
    assert "× 30 samples of 26 (estimated) tokens" in _cost(test.text)
    # the form shows the dataset fields back
    assert 'name="dataset" value="hubwatch-test/reviews"' in newest.text


def test_samples_given_override_the_datasets_rows(ds: tuple[TestClient, dict[str, str]]) -> None:
    client, _ = ds
    page = _plan(client, dataset="hubwatch-test/reviews", samples="4000").text
    cost = _cost(page)
    assert "× 4,000 samples of 26 (estimated) tokens" in cost
    assert "samples 4,000 (overrides the split&#39;s 150 rows)" in cost
    plain = _cost(_plan(client, samples="4000").text)  # no dataset: the sequence length per sample
    assert "× 4,000 samples of 2048 tokens" in plain and "estimated" not in plain


def test_the_model_pages_form_takes_a_dataset(ds: tuple[TestClient, dict[str, str]]) -> None:
    client, shas = ds
    page = client.get(f"/models/{LLAMA2}?{urlencode({'dataset': 'datasets/hubwatch-test/reviews'})}").text
    assert "× 150 samples of 26 (estimated) tokens" in _cost(page)
    assert 'name="dataset_split" value=""' in page and 'name="dataset_config" value=""' in page
    bad = client.get(f"/models/{LLAMA2}?dataset=hubwatch-test/reviews&dataset_split=validation").text
    assert "Cannot estimate (dataset_split)" in bad and "(available: train, test)" in bad


def test_the_json_api_takes_the_same_fields(ds: tuple[TestClient, dict[str, str]]) -> None:
    client, shas = ds
    body = {"repo": str(LLAMA2), "dataset": "hubwatch-test/reviews", "settings": {"method": "lora"}}
    result = client.post("/api/v1/plan", json=body).json()
    d = result["dataset"]
    assert (d["dataset"], d["revision"], d["config"], d["split"]) == (str(REVIEWS), shas["v9"], "default", "train")
    assert d["rows"] == d["samples"] == 150 and d["tokens_per_sample"] == 26 and d["tokens_per_sample_estimated"]
    assert d["revision_asked"] is None and d["samples_from"] == "the split's rows"
    cost = result["memory"]["cost"]
    assert cost["tokens"] == 150 * 26
    older = client.post("/api/v1/plan", json={**body, "dataset": f"datasets/hubwatch-test/reviews@{shas['v1']}",
                                               "samples": 300}).json()
    assert older["dataset"]["rows"] == 100 and older["dataset"]["samples"] == 300
    assert older["dataset"]["revision_asked"] == shas["v1"] and older["memory"]["cost"]["tokens"] == 300 * 25
    no_dataset = client.post("/api/v1/plan", json={"repo": str(LLAMA2)}).json()
    assert "dataset" not in no_dataset


@pytest.mark.parametrize(("fields", "field", "needle"), [
    ({"dataset": "nobody/nothing"}, "dataset",
     "datasets/nobody/nothing is not watched by this hubwatch (watched: datasets/evil-org/data, "
     "datasets/hubwatch-test/reviews); watch it with `hubwatch watch add datasets/nobody/nothing`"),
    ({"dataset": "spaces/a/b"}, "dataset", "hubwatch watches models and datasets, not spaces"),
    ({"dataset": "hubwatch-test/reviews@0000000"}, "dataset", "has no stored revision '0000000'"),
    ({"dataset": "hubwatch-test/reviews", "dataset_config": "nope"}, "dataset_config",
     "has no config 'nope' at "),
    ({"dataset": "hubwatch-test/reviews", "dataset_split": "validation"}, "dataset_split",
     "has no split 'validation' at "),
    ({"dataset": "evil-org/data", "dataset_split": "nosize"}, "dataset_split",
     "the metadata states no rows (num_examples None) at eeeeeeeeeeee; give samples (rows per epoch) instead"),
    ({"dataset_split": "test"}, "dataset", "give dataset too"),
])
def test_bad_datasets_configs_and_splits_are_named(ds: tuple[TestClient, dict[str, str]], fields: dict[str, str],
                                                   field: str, needle: str) -> None:
    client, _ = ds
    page = _plan(client, **fields)
    assert page.status_code == 400
    assert f"Cannot estimate ({field}):" in page.text and str(escape(needle)) in page.text, page.text[-3000:]
    api = client.post("/api/v1/plan", json={"repo": str(LLAMA2), **fields})
    assert api.status_code == 400
    assert api.json()["error"]["message"].startswith(f"{field}: ") and needle in api.json()["error"]["message"]


def test_the_available_splits_and_configs_are_listed(ds: tuple[TestClient, dict[str, str]]) -> None:
    client, shas = ds
    split = _plan(client, dataset="hubwatch-test/reviews", dataset_split="validation").text
    assert f"has no split &#39;validation&#39; at {shas['v9'][:12]} (available: train, test)" in split
    config = client.post("/api/v1/plan", json={"repo": str(LLAMA2), "dataset": f"hubwatch-test/reviews@{shas['v6']}",
                                               "dataset_config": "x"}).json()
    assert "(available: default, extra)" in config["error"]["message"]
    wrong = client.post("/api/v1/plan", json={"repo": str(LLAMA2), "dataset": 3}).json()
    assert wrong["error"]["message"] == "dataset: expected text, got 3"


def test_hostile_dataset_names_are_escaped(ds: tuple[TestClient, dict[str, str]]) -> None:
    client, _ = ds
    pages = [_plan(client, dataset="evil-org/data", dataset_split=f"train{EVIL}"),
             _plan(client, dataset="evil-org/data", dataset_split="missing"),
             _plan(client, dataset=f"evil-org/data{EVIL}"),
             client.get(f"/models/{LLAMA2}?{urlencode({'dataset': 'evil-org/data', 'dataset_split': f'train{EVIL}'})}")]
    for page in pages:
        assert "<script>" not in page.text and "&lt;script&gt;" in page.text
    assert "× 10 samples of 100 (estimated) tokens" in _cost(pages[0].text)
    assert "(available: train&lt;script&gt;" in pages[1].text


def test_a_polled_dataset_costs_as_the_cli_says_on_the_hub(hubsim_factory: Any, store: Store, datasets_root: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """End to end: the tracker polls the emulator (a model and the reviews dataset, every revision); the web
    app's plan on the stored revisions gives the samples, tokens and cost `hubwatch estimate --dataset`
    reads from the hub, at the newest revision and at the first."""
    from hubwatch.cli import main
    from hubwatch.settings import Settings
    from hubwatch.tracker.hub import HubClient
    from hubwatch.tracker.poller import poll_repos

    sim = hubsim_factory(root=datasets_root, at=None)
    model = RepoId.parse("hubsim-test/tiny-llama")
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url)
    for repo in (model, REVIEWS):
        store.watch(repo)
    poll_repos([model, REVIEWS], hub=HubClient.from_settings(settings), store=store, settings=settings)
    monkeypatch.setenv("HUBWATCH_HUB_ENDPOINT", sim.url)
    monkeypatch.setenv("HF_TOKEN", "")
    history = store.revisions.history_page(REVIEWS, limit=20)[0]
    first = history[-1].revision.sha
    with TestClient(create_app(make_settings(), store)) as web:
        for revision in (None, first):
            ref = f"{REVIEWS}@{revision}" if revision else str(REVIEWS)
            with pytest.raises(SystemExit):
                main(["estimate", str(model), "--json", "--method", "lora", "--dataset", ref])
            (cli,) = json.loads(capsys.readouterr().out)
            api = web.post("/api/v1/plan", json={"repo": str(model), "dataset": ref,
                                                 "settings": {"method": "lora"}}).json()
            assert api["dataset"] == cli["dataset"]
            assert api["memory"]["cost"] == cli["cost"]
            page = web.get(f"/plan?{urlencode({'repo': str(model), 'dataset': ref})}").text
            samples = cli["dataset"]["samples"]
            assert f"× {samples:,} samples of {cli['dataset']['tokens_per_sample']} (estimated) tokens" in _cost(page)
    assert cli["dataset"]["rows"] == 100  # the first revision, before train grew to 150
