"""A watched dataset's pages (issue 33): `/datasets/org/name` with the views a model has, showing
the dataset's own facts (splits, configs, features, data files, licence, gating), never mixed with
the model of the same `org/name`; hostile card text escaped. Stored through the real Store."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import yaml
from fastapi.testclient import TestClient
from feeds_seed import LLAMA2, change, make_settings, seed, sha, when

from hubwatch.feeds import create_app
from hubwatch.storage import Store
from hubwatch.domain.records import FileRecord, Kind, RepoId, RepoType, RevisionRecord, Severity

# A dataset of the same org/name as the seeded model: two repos, two pages.
DATASET = RepoId("meta-llama", "Llama-2-7b-hf", RepoType.DATASET)
EVIL = "<script>alert(1)</script>"


def card(rows: int, feature: str = "text", split: str = "train") -> bytes:
    meta = {
        "license": "cc-by-4.0",
        "extra_gated_prompt": f"Agree to the terms {EVIL}",
        "dataset_info": {
            "features": [{"name": feature, "dtype": "string"}, {"name": "label", "dtype": "int64"}],
            "splits": [{"name": split, "num_bytes": rows * 100, "num_examples": rows},
                       {"name": "test", "num_bytes": 5_000, "num_examples": 50}],
            "dataset_size": rows * 100 + 5_000,
        },
        "configs": [{"config_name": "default", "data_files": [{"split": split, "path": "data/train-*.parquet"}]}],
    }
    return f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n# A dataset\n".encode()


@dataclass
class DatasetSeed:
    shas: list[str]


def _save(store: Store, shas: list[str], title: str, day: int, readme: bytes, changes: list) -> None:  # type: ignore[type-arg]
    commit = sha(f"{DATASET}:{len(shas)}:{title}")
    revision = RevisionRecord(commit, shas[-1] if shas else None, when(day), title, title, ("lhoestq",))
    files = [FileRecord("README.md", len(readme)), FileRecord("data/train-00000.parquet", 2_000_000),
             FileRecord("data/test-00000.parquet", 30_000)]
    assert store.save_revision(DATASET, revision, files, {"README.md": readme}, changes, None, [])
    shas.append(commit)


def seed_dataset(store: Store) -> DatasetSeed:
    store.watch(DATASET)
    shas: list[str] = []
    _save(store, shas, "Initial upload", 10, card(1000), [])
    _save(store, shas, "More rows", 11, card(1500, feature=f"text{EVIL}", split=f"train{EVIL}"), [
        change(Kind.SPLITS, Severity.MEDIUM, "README.md:dataset_info.splits", f"train rows 1000 → 1500 {EVIL}",
               1000, 1500),
    ])
    return DatasetSeed(shas)


@pytest.fixture
def ds_client(store: Store) -> Iterator[tuple[TestClient, DatasetSeed]]:
    seed(store)  # the models, Llama-2-7b-hf among them
    seeded = seed_dataset(store)
    with TestClient(create_app(make_settings(), store)) as client:
        yield client, seeded


def test_dataset_page_shows_its_history_and_its_own_facts(ds_client: tuple[TestClient, DatasetSeed]) -> None:
    client, seeded = ds_client
    response = client.get(f"/datasets/{DATASET.hub_id}")
    assert response.status_code == 200
    html = response.text
    assert "<h1>datasets/meta-llama/Llama-2-7b-hf</h1>" in html
    positions = [html.index(f'id="r-{s}"') for s in reversed(seeded.shas)]  # newest first
    assert positions == sorted(positions)
    assert f'href="/datasets/{DATASET.hub_id}/revisions/{seeded.shas[-1]}"' in html
    assert 'href="https://huggingface.co/datasets/meta-llama/Llama-2-7b-hf"' in html
    panel = html[html.index('id="dataset"'):html.index("</section>", html.index('id="dataset"'))]
    assert "cc-by-4.0" in panel and "1,550 in all" in panel and "2 parquet (2.03 MB)" in panel
    assert "gated: access is asked for on the hub" in panel
    # no model estimate panel or its settings form on a dataset page (the cost of a fine-tune on the dataset
    # is its own panel, tests/feeds/test_feeds_dataset_cost.py), and no link into the model's pages
    assert 'id="estimate"' not in html and 'name="seq_len"' not in html and "Largest batch per card" not in html
    assert "/models/meta-llama/Llama-2-7b-hf" not in html


def test_dataset_and_model_of_one_name_never_mix(ds_client: tuple[TestClient, DatasetSeed]) -> None:
    client, seeded = ds_client
    model = client.get(f"/models/{LLAMA2}").text
    assert seeded.shas[-1] not in model and "train rows 1000" not in model
    assert "Samples per epoch" in model  # the model keeps its estimate panel
    dataset = client.get(f"/datasets/{DATASET.hub_id}").text
    assert "eos_token_id" not in dataset
    model_sha = next(s for s in model.split('id="r-')[1:]).split('"')[0]
    assert client.get(f"/datasets/{DATASET.hub_id}/revisions/{model_sha}").status_code == 404
    assert client.get(f"/models/{LLAMA2}/revisions/{seeded.shas[-1]}").status_code == 404


def test_dataset_revision_page_shows_the_change_and_the_facts_at_that_revision(
    ds_client: tuple[TestClient, DatasetSeed],
) -> None:
    client, seeded = ds_client
    old, new = seeded.shas
    html = client.get(f"/datasets/{DATASET.hub_id}/revisions/{new}").text
    assert f'<a href="/datasets/{DATASET.hub_id}">datasets/meta-llama/Llama-2-7b-hf</a>' in html
    assert f'href="/datasets/{DATASET.hub_id}/revisions/{old}"' in html  # the parent
    assert "1,500" in html and "The dataset at this revision" in html and "<h2>Estimate</h2>" not in html
    first = client.get(f"/datasets/{DATASET.hub_id}/revisions/{old}").text
    assert "1,000" in first and "1,500" not in first


def test_unknown_dataset_is_the_404_page_with_the_command_that_watches_it(
    ds_client: tuple[TestClient, DatasetSeed],
) -> None:
    client, _ = ds_client
    for path, named in (("/datasets/nobody/nothing", "datasets/nobody/nothing"), ("/models/nobody/nothing",
                                                                                 "nobody/nothing")):
        response = client.get(path, headers={"accept": "text/html"})
        assert response.status_code == 404 and "<h1>404: not found</h1>" in response.text
        assert f"<code>hubwatch watch add {named}</code>" in response.text or \
            f"`hubwatch watch add {named}` watches it" in response.text
        assert json.loads(client.get(path).text)["error"]["code"] == "not_found"
    # the model's name has no dataset of its own name unless one is watched
    assert client.get("/datasets/meta-llama/Llama-3.1-8B-Instruct").status_code == 404


def test_hostile_dataset_text_is_escaped(ds_client: tuple[TestClient, DatasetSeed]) -> None:
    client, seeded = ds_client
    for path in (f"/datasets/{DATASET.hub_id}", f"/datasets/{DATASET.hub_id}/revisions/{seeded.shas[-1]}"):
        html = client.get(path).text
        assert "<script>" not in html and "&lt;script&gt;" in html


def test_dataset_twins_feeds_badges_and_compare_are_the_datasets(ds_client: tuple[TestClient, DatasetSeed]) -> None:
    client, seeded = ds_client
    old, new = seeded.shas
    base = f"/datasets/{DATASET.hub_id}"
    md = client.get(f"{base}.md")
    assert md.status_code == 200 and "train rows 1000 → 1500" in md.text and "eos_token_id" not in md.text
    assert f"https://hubwatch.example{base}" in md.text
    for fmt in ("atom", "rss", "json"):
        feed = client.get(f"{base}/feed.{fmt}")
        assert feed.status_code == 200, fmt
        assert f"https://hubwatch.example{base}/revisions/{new}" in feed.text
        assert "eos_token_id" not in feed.text and "train rows 1000" in feed.text
    atom = client.get(f"{base}/feed.atom").text
    assert "&lt;script&gt;" in atom and "<script>" not in atom
    badge = client.get(f"/badges{base}.json").json()
    model_badge = client.get(f"/badges/{LLAMA2}.json").json()
    assert badge != model_badge and "medium" in json.dumps(badge)
    assert client.get(f"/badges{base}/revisions/{new}.json").status_code == 200
    api = client.get(f"/api/v1{base}").json()
    assert api["repo"] == "datasets/meta-llama/Llama-2-7b-hf" and api["url"] == f"https://hubwatch.example{base}"
    history = client.get(f"/api/v1{base}/history").json()
    assert [h["sha"] for h in history] == seeded.shas
    assert client.get(f"/api/v1{base}/revisions/{new}").status_code == 200
    assert client.get(f"/api/v1{base}/revisions/{new}/standing").json()["known"] is True
    compare = client.get(f"{base}/compare/{old}...{new}")
    assert compare.status_code == 200 and "<script>" not in compare.text
    compared = client.get(f"/api/v1{base}/compare/{old}...{new}").json()
    # Read as data, as the poll read it: the split's rows, never a model's config or tokenizer diff.
    kinds = {c["kind"] for c in compared["changes"]}
    assert "splits" in kinds and not kinds & {"config", "tokenizer", "weights"}, compared["changes"]
    assert "default: split train removed (1,000 rows)" in {c["summary"] for c in compared["changes"]}
    assert client.get(f"/api/v1/datasets/nobody/nothing/history").status_code == 404


def test_every_dataset_route_answers_get_and_head(ds_client: tuple[TestClient, DatasetSeed]) -> None:
    client, seeded = ds_client
    old, new = seeded.shas
    values = {"org": DATASET.org, "name": DATASET.name, "sha": new, "fmt": "rss", "spec": f"{old[:7]}...{new[:7]}"}
    paths = client.get("/api/openapi.json").json()["paths"]
    dataset_paths = [p for p, ops in paths.items() if "/datasets/{org}/{name}" in p and "get" in ops]
    assert len(dataset_paths) >= 5
    for path in dataset_paths:
        url = re.sub(r"\{([^}]+)\}", lambda m: values[m.group(1)], path)
        get, head = client.get(url), client.head(url)
        assert get.status_code == head.status_code == 200, (url, get.status_code)
        assert head.content == b""
