"""Request bodies are bounded: too large or too deeply nested JSON is a 400 in the app's one error shape."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from hubwatch.feeds import create_app
from hubwatch.settings import Settings


def client(store: Any) -> TestClient:
    return TestClient(create_app(Settings(database_url="sqlite://"), store))


def test_deeply_nested_query_body_is_a_400_not_a_crash(store: Any) -> None:
    body = "[" * 5000 + "]" * 5000
    response = client(store).post("/v1/query", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] and "JSON" in response.json()["error"]["message"]


def test_oversized_query_body_is_refused(store: Any) -> None:
    body = '{"commit": "' + "a" * (2 << 20) + '"}'
    response = client(store).post("/v1/query", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert "larger than" in response.json()["error"]["message"]
