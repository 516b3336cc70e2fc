"""What a client checks before it trusts the web app: `/api/v1/identity`, the `X-Hubwatch-API` header on
every answer (errors and pages included), one model's state, and an unknown commit on no line."""

from __future__ import annotations

from fastapi.testclient import TestClient
from feeds_seed import LLAMA2, Seeded, client, feeds_store, seeded  # noqa: F401

from hubwatch import __version__
from hubwatch.storage import Store
from hubwatch.domain.records import RepoId


def test_identity_names_the_service_its_version_and_the_api(client: TestClient) -> None:
    answer = client.get("/api/v1/identity")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    assert answer.json() == {"service": "hubwatch", "version": __version__, "api": 1}
    assert client.head("/api/v1/identity").status_code == 200


def test_every_answer_carries_the_api_version(client: TestClient, seeded: Seeded) -> None:
    for path in ("/api/v1/identity", "/api/v1/models", f"/api/v1/models/{LLAMA2}/history",
                 f"/api/v1/models/{LLAMA2}/revisions/{'ab' * 20}", "/api/v1/no-such-route", "/no/such/page",
                 "/healthz", "/", f"/models/{LLAMA2}", f"/v1/vulns/x_NOPE"):
        answer = client.get(path)
        assert answer.headers.get("X-Hubwatch-API") == "1", (path, answer.status_code)
    page_404 = client.get("/no/such/page", headers={"Accept": "text/html"})
    assert page_404.status_code == 404 and page_404.headers["X-Hubwatch-API"] == "1"


def test_one_models_state(client: TestClient, feeds_store: Store) -> None:
    body = client.get(f"/api/v1/models/{LLAMA2}").json()
    listed = next(r for r in client.get("/api/v1/models").json()["models"] if r["repo"] == str(LLAMA2))
    assert body == listed and body["revision_count"] == 4 and body["last_polled_at"] == "2023-07-25T12:00:00Z"
    missing = client.get("/api/v1/models/nobody/nothing")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    feeds_store.unwatch(RepoId.parse(str(LLAMA2)))
    assert client.get(f"/api/v1/models/{LLAMA2}").status_code == 404  # not watched any more


def test_an_unknown_commit_is_on_no_line(client: TestClient, seeded: Seeded) -> None:
    unknown = client.get(f"/api/v1/models/{LLAMA2}/revisions/{'ab' * 20}/standing").json()
    assert unknown["known"] is False and unknown["on_main_line"] is None
    known = client.get(f"/api/v1/models/{LLAMA2}/revisions/{seeded.shas[LLAMA2][0]}/standing").json()
    assert known["known"] is True and known["on_main_line"] is True
