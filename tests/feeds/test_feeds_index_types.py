"""The index lists models and datasets together (issue 33): each dataset row tagged "dataset" and
linked to its own page, `?type=model|dataset` keeping one kind (with the other filters, and
through keyset pages), the header naming what is listed, and `/api/v1/models` giving each repo's
`type` and taking the same filter. Stored through the real Store, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

from fastapi.testclient import TestClient
from feeds_seed import HOSTILE, LLAMA2, LLAMA3, Seeded, change, client, feeds_store, seeded, when  # noqa: F401

from hubwatch.domain.records import FileRecord, Kind, RepoId, RepoType, RevisionRecord, Severity
from hubwatch.storage import Store

SQUAD = RepoId("rajpurkar", "squad", RepoType.DATASET)
TWIN = RepoId("meta-llama", "Llama-2-7b-hf", RepoType.DATASET)  # the seeded model's org/name, as a dataset
MODELS = {f"/models/{LLAMA2}", f"/models/{LLAMA3}", f"/models/{HOSTILE}"}
DATASETS = {f"/datasets/{SQUAD.hub_id}", f"/datasets/{TWIN.hub_id}"}


def _rows(html: str) -> dict[str, str]:
    """Each listed repo's page path → the text of its row."""
    body = html[html.index("<tbody>"):html.index("</tbody>")] if "<tbody>" in html else ""
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        path = re.search(r'<td class="model">.*?</a>/<a href="(/(?:models|datasets)/[^"]+)"', row, re.S)
        assert path is not None, row
        rows[path.group(1)] = row
    return rows


def _watch_datasets(store: Store) -> None:
    for repo in (SQUAD, TWIN):
        assert store.watch(repo)
    revision = RevisionRecord("d" * 40, None, when(24), "Add a test split", "Add a test split")
    splits = change(Kind.SPLITS, Severity.MEDIUM, "README.md:dataset_info.splits", "test rows 50 → 80", 50, 80)
    assert store.save_revision(SQUAD, revision, [FileRecord("README.md", 3)], {"README.md": b"---"}, [splits],
                               None, [])  # fmt: skip


def test_the_index_lists_datasets_beside_models_and_tags_them(client: TestClient, feeds_store: Store) -> None:
    _watch_datasets(feeds_store)
    html = client.get("/").text
    rows = _rows(html)
    assert set(rows) == MODELS | DATASETS  # the model and the dataset of one org/name: two rows
    for path, row in rows.items():
        assert ('<span class="badge repo-type">dataset</span>' in row) == path.startswith("/datasets/"), path
    assert "test rows 50 → 80" in rows[f"/datasets/{SQUAD.hub_id}"]
    assert f'href="/datasets/{SQUAD.hub_id}/revisions/{"d" * 40}"' in rows[f"/datasets/{SQUAD.hub_id}"]
    assert "<h1>Watched models and datasets</h1>" in html and "<th>Repo</th>" in html
    # the dataset's row leads to the dataset's page, never to the model of the same name
    page = client.get(f"/datasets/{TWIN.hub_id}")
    assert page.status_code == 200 and f"<h1>{TWIN}</h1>" in page.text


def test_type_filter_keeps_one_kind_with_the_other_filters(client: TestClient, feeds_store: Store) -> None:
    _watch_datasets(feeds_store)
    cases = {
        "?type=dataset": DATASETS,
        "?type=datasets": DATASETS,  # the hub's plural reads the same
        "?type=model": MODELS,
        "?type=": MODELS | DATASETS,  # the form submitted empty
        "?type=dataset&org=meta-llama": {f"/datasets/{TWIN.hub_id}"},
        "?type=model&q=llama-2": {f"/models/{LLAMA2}"},
        "?type=dataset&kind=splits": {f"/datasets/{SQUAD.hub_id}"},
        "?type=model&kind=splits": set(),
    }
    for query, expected in cases.items():
        response = client.get("/" + query)
        assert response.status_code == 200, (query, response.text)
        assert set(_rows(response.text)) == expected, query
    datasets = client.get("/?type=dataset").text
    assert "<h1>Watched datasets</h1>" in datasets and '<option value="dataset" selected>' in datasets
    assert "<h1>Watched models</h1>" in client.get("/?type=model").text
    assert "No watched model matches these filters." in client.get("/?type=model&kind=splits").text
    assert "No watched dataset matches these filters." in client.get("/?type=dataset&q=nothing").text
    assert set(_rows(client.get("/orgs/meta-llama?type=dataset").text)) == {f"/datasets/{TWIN.hub_id}"}
    bad = client.get("/?type=space")
    assert bad.status_code == 400
    assert "type" in bad.json()["error"]["message"] and "type=dataset" in bad.json()["error"]["message"]


def test_keyset_pages_walk_every_dataset_once_with_the_filter_kept(
    client: TestClient, feeds_store: Store, count_selects: Any
) -> None:
    for i in range(130):  # interleaved by name: a model and a dataset of each org/name
        feeds_store.watch(RepoId("bulk", f"m{i:03d}", RepoType.DATASET))
        feeds_store.watch(RepoId("bulk", f"m{i:03d}"))
    seen: list[str] = []
    url: str | None = "/?type=dataset"
    pages = 0
    while url is not None:
        html = client.get(url).text
        pages += 1
        listed = list(_rows(html))
        assert all(p.startswith("/datasets/") for p in listed), url
        seen += listed
        link = re.search(r'<a rel="next" href="\?([^"]+)"', html)
        url = f"/?{unescape(link.group(1))}" if link else None
        if url is not None:
            assert "type=dataset" in url and "after=datasets%2Fbulk%2Fm" in url, url
    assert pages == 2
    assert seen == [f"/datasets/bulk/m{i:03d}" for i in range(130)]
    with count_selects(feeds_store) as statements:
        page = client.get("/?type=dataset&after=datasets/bulk/m099").text
    assert list(_rows(page))[0] == "/datasets/bulk/m100"
    assert any("(repos.org, repos.name, repos.repo_type) >" in s for s in statements)  # read from the cursor on


def test_the_api_lists_each_repos_type_and_takes_the_filter(client: TestClient, feeds_store: Store) -> None:
    _watch_datasets(feeds_store)
    rows = client.get("/api/v1/models").json()["models"]
    types = {r["repo"]: r["type"] for r in rows}
    assert types[str(SQUAD)] == "dataset" and types[str(TWIN)] == "dataset" and types[str(LLAMA2)] == "model"
    assert next(r for r in rows if r["repo"] == str(SQUAD))["url"].endswith(f"/datasets/{SQUAD.hub_id}")
    only = client.get("/api/v1/models?type=dataset").json()["models"]
    assert [r["repo"] for r in only] == [str(TWIN), str(SQUAD)]  # by org/name
    assert {r["type"] for r in client.get("/api/v1/models?type=model").json()["models"]} == {"model"}
    assert client.get(f"/api/v1/datasets/{SQUAD.hub_id}").json()["type"] == "dataset"
    assert client.get("/api/v1/models?type=spaces").status_code == 400


def test_the_api_pages_one_type_with_its_next_link(client: TestClient, feeds_store: Store) -> None:
    for i in range(1001):
        feeds_store.watch(RepoId("bulk", f"d{i:04d}", RepoType.DATASET))
    feeds_store.watch(RepoId("bulk", "d0500"))  # a model among them, left out of every page
    first = client.get("/api/v1/models?type=dataset").json()
    assert len(first["models"]) == 1000 and {r["type"] for r in first["models"]} == {"dataset"}
    assert "type=dataset" in first["next"] and "after=datasets%2Fbulk%2Fd0999" in first["next"]
    second = client.get(first["next"].removeprefix("https://hubwatch.example")).json()
    assert [r["repo"] for r in second["models"]] == ["datasets/bulk/d1000"] and "next" not in second
