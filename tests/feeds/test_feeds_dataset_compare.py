"""A dataset's compare page (issue 33) shows the dataset's facts at BASE and at HEAD (rows in all,
configs, data files, licence, access) where a model's shows its estimate deltas: no "Estimate"
section, which names a model's figures. Stored through the real Store, on SQLite and PostgreSQL."""

from __future__ import annotations

import re

from test_feeds_datasets import DATASET, DatasetSeed, ds_client  # noqa: F401
from fastapi.testclient import TestClient


def _row(html: str, figure: str) -> list[str]:
    row = re.search(rf"<tr><td>{figure}</td>(.*?)</tr>", html, re.S)
    assert row is not None, figure
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]


def test_dataset_compare_shows_its_facts_at_both_sides(ds_client: tuple[TestClient, DatasetSeed]) -> None:
    client, seeded = ds_client
    old, new = seeded.shas
    html = client.get(f"/datasets/{DATASET.hub_id}/compare/{old}...{new}").text
    section = html[html.index('<section class="estimate" id="dataset">'):html.index("<h2>Changes</h2>")]
    assert "<h2>The dataset</h2>" in section and "<h2>Estimate</h2>" not in html
    assert _row(section, "Rows in all") == ["1,050", "1,550"]  # 1000 + 50 test rows, then 1500 + 50
    assert _row(section, "Licence") == ["cc-by-4.0", "cc-by-4.0"]
    assert all(cell.startswith("gated: access is asked for on the hub") for cell in _row(section, "Access"))
    assert "&lt;script&gt;" in section and "<script>" not in section  # the hostile gating prompt, escaped
    assert _row(section, "Data files") == ["2 parquet (2.03 MB)"] * 2  # 2,000,000 + 30,000 bytes
    # the model of the same org/name keeps its estimate section
    model = client.get("/api/v1/models/meta-llama/Llama-2-7b-hf/history").json()
    first, last = model[0]["sha"], model[-1]["sha"]
    assert "<h2>Estimate</h2>" in client.get(f"/models/meta-llama/Llama-2-7b-hf/compare/{first}...{last}").text
