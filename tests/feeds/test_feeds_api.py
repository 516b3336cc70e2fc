"""JSON API, admin endpoints, the webhook receiver, /healthz and /metrics."""

from __future__ import annotations

from fastapi.testclient import TestClient
from feeds_seed import ADMIN_TOKEN, LLAMA2, WEBHOOK_SECRET, Seeded, client, feeds_store, seeded  # noqa: F401

from hubwatch.storage import Store
from hubwatch.domain.records import RepoId


def test_models_lists_watched_repos(client: TestClient) -> None:
    rows = client.get("/api/v1/models").json()["models"]
    assert [r["repo"] for r in rows] == ["evil-org/hostile", "meta-llama/Llama-2-7b-hf",
                                         "meta-llama/Llama-3.1-8B-Instruct"]
    llama = rows[1]
    assert llama["revision_count"] == 4 and llama["state"] == "ok"
    assert llama["last_polled_at"] == "2023-07-25T12:00:00Z"


def test_history_is_oldest_first_in_the_cli_shape(client: TestClient, seeded: Seeded) -> None:
    rows = client.get(f"/api/v1/models/{LLAMA2}/history").json()
    assert [r["sha"] for r in rows] == seeded.shas[LLAMA2]
    assert rows[0]["parent"] is None and rows[1]["parent"] == seeded.shas[LLAMA2][0]
    assert set(rows[1]) == {"sha", "parent", "date", "title", "changes", "advisories"}
    assert rows[3]["changes"] == [{"kind": "context", "severity": "medium", "path": "config.json:max_position_embeddings",
                                   "summary": "max_position_embeddings 2048 → 4096", "direction": "hazard"}]
    assert rows[3]["date"] == "2023-07-21T12:00:00+00:00"
    assert client.get("/api/v1/models/nobody/nothing/history").status_code == 404


def test_revision_json_has_detail_and_estimate(client: TestClient, seeded: Seeded) -> None:
    sha = seeded.shas[LLAMA2][3]
    body = client.get(f"/api/v1/models/{LLAMA2}/revisions/{sha[:9]}").json()
    assert body["sha"] == sha and body["position"] == 3
    assert body["changes"][0]["detail"]["old"] == 2048
    assert body["estimate"]["params"]["derived"] == 6_738_415_616
    assert body["estimate"]["memory_gb"]["lora"] > 0
    assert len(body["advisories"]) == 1


def test_admin_watch_needs_the_bearer_token(client: TestClient, feeds_store: Store) -> None:
    body = {"repo": "google/gemma-2b"}
    missing = client.post("/admin/watch", json=body)
    assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
    assert missing.json()["error"]["code"] == "unauthorized"
    wrong = client.post("/admin/watch", json=body, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 403 and wrong.json()["error"]["code"] == "forbidden"
    auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    added = client.post("/admin/watch", json=body, headers=auth)
    assert added.status_code == 201 and added.json() == {"repo": "google/gemma-2b", "added": True}
    assert RepoId("google", "gemma-2b") in {s.repo for s in feeds_store.repos.watched()}
    assert client.post("/admin/watch", json=body, headers=auth).status_code == 200
    bad = client.post("/admin/watch", json={"repo": "no-slash"}, headers=auth)
    assert bad.status_code == 400 and "repo" in bad.json()["error"]["message"]


def test_admin_is_disabled_without_a_token(feeds_store: Store) -> None:
    from feeds_seed import make_settings

    from hubwatch.feeds import create_app

    app = create_app(make_settings(admin_token=None, webhook_secret=None), feeds_store)
    with TestClient(app) as c:
        assert c.post("/admin/watch", json={"repo": "a/b"}, headers={"Authorization": "Bearer x"}).status_code == 403
        assert c.post("/webhooks/hub", json={}, headers={"X-Webhook-Secret": "x"}).status_code == 403


def _hook(repo: str = "meta-llama/Llama-2-7b-hf", scope: str = "repo.content") -> dict[str, object]:
    return {"event": {"action": "update", "scope": scope},
            "repo": {"type": "model", "name": repo, "id": "abc", "headSha": "0" * 40}}


def test_webhook_checks_the_secret_and_calls_back(client: TestClient, seeded: Seeded) -> None:
    assert client.post("/webhooks/hub", json=_hook()).status_code == 401
    assert client.post("/webhooks/hub", json=_hook(), headers={"X-Webhook-Secret": "wrong"}).status_code == 403
    assert seeded.received == []
    ok = client.post("/webhooks/hub", json=_hook(), headers={"X-Webhook-Secret": WEBHOOK_SECRET})
    assert ok.status_code == 202 and ok.json()["accepted"] is True
    assert seeded.received == [LLAMA2]
    ignored = client.post("/webhooks/hub", json=_hook(scope="repo.config"), headers={"X-Webhook-Secret": WEBHOOK_SECRET})
    assert ignored.status_code == 202 and ignored.json()["accepted"] is False
    assert seeded.received == [LLAMA2]
    bad = client.post("/webhooks/hub", json={"event": {}}, headers={"X-Webhook-Secret": WEBHOOK_SECRET})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_request"


def test_healthz_and_metrics(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok", "database": "ok", "hub": "ok"}
    metrics = client.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = metrics.text
    assert "hubwatch_watched_repos 3\n" in text
    assert 'hubwatch_repos_by_state{state="ok"} 1' in text
    assert "hubwatch_revisions 7\n" in text and "hubwatch_advisories 5\n" in text
    assert "hubwatch_last_poll_age_seconds " in text


def test_unknown_paths_and_methods_use_the_error_shape(client: TestClient) -> None:
    missing = client.get("/no/such/page")
    assert missing.status_code == 404 and set(missing.json()["error"]) == {"code", "message"}
    wrong = client.get("/v1/query")
    assert wrong.status_code == 405 and wrong.json()["error"]["code"] == "method_not_allowed"


def test_plan_estimates_a_pasted_config(client: TestClient, data_dir) -> None:  # type: ignore[no-untyped-def]
    import json

    config = json.loads((data_dir / "configs/meta-llama__Llama-2-7b-hf/config.json").read_text())
    body = client.post("/api/v1/plan", json={"config": config, "settings": {"method": "qlora", "batch": 2}}).json()
    assert body["params"]["derived"] == 6_738_415_616
    memory = body["memory"]
    assert memory["settings"]["method"] == "qlora" and memory["settings"]["batch"] == 2
    assert 0 < memory["memory_gb"]["qlora"] < memory["memory_gb"]["lora"] < memory["memory_gb"]["full_finetune"]
    assert any(card["name"] == "H100-80GB" for card in memory["cards"])


def test_plan_rejects_bad_input_naming_the_key(client: TestClient, data_dir) -> None:  # type: ignore[no-untyped-def]
    import json

    config = json.loads((data_dir / "configs/meta-llama__Llama-2-7b-hf/config.json").read_text())
    cases = [
        ({"config": {**config, "num_hidden_layers": -1}}, "config.num_hidden_layers"),
        ({"config": {**config, "hidden_size": "big"}}, "config.hidden_size"),
        ({"config": config, "settings": {"method": "sideways"}}, "settings.method"),
        ({"config": config, "settings": {"batchy": 1}}, "settings.batchy"),
        ({"config": [1, 2]}, "config must be a JSON object"),
        ({"cfg": config}, "cfg is not a plan field"),
    ]
    for body, needle in cases:
        response = client.post("/api/v1/plan", json=body)
        assert response.status_code == 400, body
        assert response.json()["error"]["code"] == "bad_request"
        assert needle in response.json()["error"]["message"], response.json()


def test_healthz_is_503_when_the_database_is_gone(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil
    import time

    from feeds_seed import make_settings

    from hubwatch.feeds.routes.ops import FRESH_S

    from hubwatch.feeds import create_app

    folder = tmp_path / "db"
    folder.mkdir()
    gone = Store.open(f"sqlite:///{folder / 'x.db'}")
    with TestClient(create_app(make_settings(), gone)) as c:
        assert c.get("/healthz").status_code == 200
        gone.close()
        shutil.rmtree(folder)  # the next connection cannot open the file
        time.sleep(FRESH_S)  # the probe's last answer is reused that long
        response = c.get("/healthz")
    assert response.status_code == 503 and response.json()["error"]["code"] == "unavailable"


def test_every_route_is_documented(client: TestClient) -> None:
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "web.md").read_text()
    paths = list(client.get("/api/openapi.json").json()["paths"])
    assert len(paths) >= 20
    missing = [p for p in paths if p.replace("{fmt}", "{atom,rss,json}") not in doc]
    assert missing == []
