"""shields.io endpoint badges: exact keys, latest change severity, 'is my pin affected' as the standing says."""

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


def test_pin_badge_says_what_the_standing_says(client: TestClient, seeded: Seeded) -> None:
    shas = seeded.shas[LLAMA2]
    head = client.get(f"/badges/{LLAMA2}/revisions/{shas[3]}.json").json()
    assert set(head) == KEYS
    assert head["label"] == f"hubwatch {shas[3][:7]}"
    assert head["message"] == "2 hazards ≥ low" and head["color"] == "red"
    high_only = client.get(f"/badges/{LLAMA2}/revisions/{shas[3][:12]}.json?min_severity=high").json()
    assert high_only["message"] == "1 hazard ≥ high"
    standing = client.get(f"/api/v1/models/{LLAMA2}/revisions/{shas[3]}/standing").json()
    ids = [a["id"] for a in standing["carries"]]
    acknowledged = client.get(f"/badges/{LLAMA2}/revisions/{shas[3]}.json?ignore={ids[0]}").json()
    assert acknowledged["message"] == "1 hazard ≥ low" and acknowledged["color"] == "orange"
    clean = client.get(f"/badges/{LLAMA2}/revisions/{shas[1]}.json").json()
    assert clean["message"] == "up to date" and clean["color"] == "brightgreen"
    # the first revision predates the chat template update: a pin there lacks it
    first = client.get(f"/badges/{LLAMA2}/revisions/{shas[0]}.json").json()
    assert first["message"] == "lacks 1 update ≥ low" and first["color"] == "red"


def test_pin_badge_errors(client: TestClient) -> None:
    unknown = client.get(f"/badges/{LLAMA2}/revisions/{'0' * 40}.json")
    assert unknown.status_code == 200 and unknown.json()["message"] == "unknown revision"
    assert unknown.json()["color"] == "lightgrey"
    missing = client.get(f"/badges/nobody/nothing/revisions/{'0' * 40}.json")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    bad = client.get(f"/badges/{LLAMA2}/revisions/{'0' * 40}.json?min_severity=extreme")
    assert bad.status_code == 400
