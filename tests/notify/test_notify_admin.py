"""The same subscriptions over HTTP: POST/GET/DELETE /admin/subscriptions behind the admin token;
outbox counts on /metrics."""

from __future__ import annotations

from fastapi.testclient import TestClient
from hubwatch.feeds.app import create_app
from hubwatch.settings import Settings
from hubwatch.storage import Store

TOKEN = "s3cret-admin"


def test_admin_subscriptions_and_metrics(store: Store) -> None:
    app = create_app(Settings(database_url="sqlite://", admin_token=TOKEN), store)
    client = TestClient(app)
    auth = {"authorization": f"Bearer {TOKEN}"}
    assert client.get("/admin/subscriptions").status_code == 401
    assert client.post("/admin/subscriptions", json={"url": "nonsense://x"}, headers=auth).status_code == 400
    bad = client.post("/admin/subscriptions", json={"url": "json://127.0.0.1:9/", "kinds": ["nope"]}, headers=auth)
    assert bad.status_code == 400 and "unknown nope" in bad.text
    assert client.get("/admin/subscriptions", headers=auth).json() == []  # nothing stored by the refusals
    made = client.post("/admin/subscriptions", headers=auth,
                       json={"url": "https://hooks.example/x?token=abc", "repos": ["acme/m"], "digest": "weekly"})  # fmt: skip
    assert made.status_code == 201
    body = made.json()
    assert body["secret"].startswith("whsec_") and body["target"] == "https://hooks.example/x"
    listed = client.get("/admin/subscriptions", headers=auth).json()
    assert [s["id"] for s in listed] == [body["id"]] and "secret" not in listed[0] and "abc" not in str(listed)
    assert 'hubwatch_notifications{state="pending"} 0' in client.get("/metrics").text
    assert client.delete(f"/admin/subscriptions/{body['id']}", headers=auth).status_code == 200
    assert client.delete(f"/admin/subscriptions/{body['id']}", headers=auth).status_code == 404
