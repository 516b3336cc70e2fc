"""Integer query parameters past what the database takes are a 400 in the one error shape, not a 500."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from hubwatch.domain.records import RepoId
from hubwatch.feeds import create_app
from hubwatch.settings import Settings
from hubwatch.storage.errors import InvalidRecord

HUGE = ["9223372036854775807", "99999999999999999999", "10000000000000000000000000", "-1"]


def _client(store: Any) -> TestClient:
    store.watch(RepoId.parse("org/model"))
    return TestClient(create_app(Settings(database_url="sqlite://"), store))


@pytest.mark.parametrize("path", ["/api/v1/models", "/", "/orgs/org"])
@pytest.mark.parametrize("page", HUGE)
def test_a_page_past_the_range_is_a_json_400(store: Any, path: str, page: str) -> None:
    response = _client(store).get(path, params={"page": page})
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["error"]["code"] == "bad_request" and "page" in body["error"]["message"]


def test_a_browser_gets_the_html_error_page(store: Any) -> None:
    response = _client(store).get("/", params={"page": HUGE[1]}, headers={"accept": "text/html"})
    assert response.status_code == 400 and response.headers["content-type"].startswith("text/html")
    assert "400: bad request" in response.text and "page" in response.text


def test_the_last_page_in_range_answers(store: Any) -> None:
    client = _client(store)
    assert client.get("/api/v1/models", params={"page": 1_000_000}).json() == {"models": []}
    assert client.get("/", params={"page": 1_000_000}).status_code == 200


def test_the_store_refuses_offsets_past_64_bits(store: Any) -> None:
    with pytest.raises(InvalidRecord):
        store.repos.watched(offset=2**63)
    with pytest.raises(InvalidRecord):
        store.repos.watched(limit=2**64)
