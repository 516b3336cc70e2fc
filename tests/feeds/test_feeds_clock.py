"""The web app reads "now" from the clock it is given: `/metrics`' last poll age."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient

from hubwatch.domain.clock import fixed_clock
from hubwatch.domain.records import RepoId
from hubwatch.feeds import create_app
from hubwatch.settings import Settings
from hubwatch.storage import Store

POLLED = datetime(2021, 3, 4, 5, 6, 7, tzinfo=UTC)


def test_metrics_age_is_measured_on_the_apps_clock(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'hw.db'}") as store:
        repo = RepoId.parse("acme/tiny")
        store.watch(repo)
        store.repos.record_poll(repo, "ok", None, POLLED)
        app = create_app(Settings(database_url="sqlite://"), store, clock=fixed_clock(POLLED + timedelta(seconds=90)))
        with TestClient(app) as client:
            text = client.get("/metrics").text
            assert client.get("/healthz").json() == {"status": "ok", "database": "ok", "hub": "ok"}
    assert "hubwatch_last_poll_age_seconds 90\n" in text
