"""shields.io endpoint badges: exact keys, latest change severity, 'is my pin affected'."""

from __future__ import annotations

from fastapi.testclient import TestClient
from feeds_seed import LLAMA2, LLAMA3, Seeded, client, feeds_store, seeded  # noqa: F401

KEYS = {"schemaVersion", "label", "message", "color", "cacheSeconds"}


def test_model_badge_shows_latest_severity_and_advisory_count(client: TestClient) -> None:
    body = client.get(f"/badges/{LLAMA2}.json").json()
    assert set(body) == KEYS and body["schemaVersion"] == 1
    assert body["message"] == "latest: medium · 3 advisories"
    assert body["color"] == "orange"
    assert client.get(f"/badges/{LLAMA3}.json").json()["message"] == "latest: high · 1 advisory"
    assert client.get("/badges/nobody/nothing.json").status_code == 404


def test_pin_badge_counts_advisories_affecting_the_revision(client: TestClient, seeded: Seeded) -> None:
    shas = seeded.shas[LLAMA2]
    head = client.get(f"/badges/{LLAMA2}/revisions/{shas[3]}.json").json()
    assert set(head) == KEYS
    assert head["label"] == f"hubwatch {shas[3][:7]}"
    assert head["message"] == "2 advisories ≥ low" and head["color"] == "red"
    high_only = client.get(f"/badges/{LLAMA2}/revisions/{shas[3][:12]}.json?min_severity=high").json()
    assert high_only["message"] == "1 advisory ≥ high"
    clean = client.get(f"/badges/{LLAMA2}/revisions/{shas[1]}.json").json()
    assert clean["message"] == "not affected" and clean["color"] == "brightgreen"
    # the first revision predates the chat template fix: affected by the fix advisory
    assert client.get(f"/badges/{LLAMA2}/revisions/{shas[0]}.json").json()["message"] == "1 advisory ≥ low"


def test_pin_badge_errors(client: TestClient) -> None:
    missing = client.get(f"/badges/{LLAMA2}/revisions/{'0' * 40}.json")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    bad = client.get(f"/badges/{LLAMA2}/revisions/{'0' * 40}.json?min_severity=extreme")
    assert bad.status_code == 400
