"""Inherited advisories reach what reads advisories: `hubwatch check` (with the base's fix named
while the repo has none) and the OSV API's /v1/query."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from derivatives_scenario import BASE, FIXED, STALE, Scenario, scenario  # noqa: F401  (the fixture)
from fastapi.testclient import TestClient

from hubwatch.cli import _register, cli
from hubwatch.feeds import create_app


def _project(tmp_path: Path, scenario: Scenario) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    stale, fixed = scenario.store.head(STALE).sha, scenario.store.head(FIXED).sha
    (project / "train.py").write_text(
        f'a = AutoModel.from_pretrained("{STALE}", revision="{stale}")\n'
        f'b = AutoModel.from_pretrained("{FIXED}", revision="{fixed}")\n',
        encoding="utf-8",
    )
    return project


def test_check_reports_the_inherited_advisory_and_the_base_fix(scenario: Scenario, tmp_path: Path) -> None:
    fix = scenario.advance(BASE)
    project = _project(tmp_path, scenario)
    _register()
    env = {"HUBWATCH_DATABASE_URL": scenario.url, "COLUMNS": "200"}
    result = CliRunner().invoke(cli, ["check", str(project)], env=env)
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    stale_at = next(i for i, line in enumerate(lines) if line.startswith("train.py:1"))
    assert "affected" in lines[stale_at] and "-inherited" in lines[stale_at + 1]
    assert f"no fixed revision of this repo yet; the base {BASE} fixed it at {fix[:12]}" in lines[stale_at + 2]
    assert any(line.startswith("train.py:2") and "clean" in line for line in lines)

    report = json.loads(CliRunner().invoke(cli, ["check", str(project), "--json"], env=env).output)
    stale_pin = next(p for p in report["pins"] if p["repo"] == str(STALE))
    (hit,) = stale_pin["advisories"]
    assert hit["id"].endswith("-inherited") and hit["direction"] == "hazard" and "upstream_fix" in hit


def test_query_api_answers_with_the_inherited_advisory(scenario: Scenario) -> None:
    scenario.advance(BASE)
    stale = scenario.store.head(STALE).sha
    client = TestClient(create_app(scenario.settings, scenario.store))
    answer = client.post("/v1/query", json={"commit": stale}).json()
    (vuln,) = answer["vulns"]
    assert vuln["id"].endswith("-inherited") and vuln["upstream"]
    assert client.get(f"/v1/vulns/{vuln['id']}").json()["upstream"] == vuln["upstream"]
    assert client.post("/v1/query", json={"commit": scenario.store.head(FIXED).sha}).json() == {}


def test_check_against_a_server_names_the_base_fix(scenario: Scenario, tmp_path: Path) -> None:
    import socket
    import threading
    import time

    import uvicorn

    fix = scenario.advance(BASE)
    project = _project(tmp_path, scenario)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(scenario.settings, scenario.store), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        _register()
        env = {"HUBWATCH_DATABASE_URL": f"sqlite:///{tmp_path / 'empty.db'}", "COLUMNS": "200"}  # knows nothing
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        report = CliRunner().invoke(cli, ["check", str(project), "--json", "--server", url], env=env)
        text = CliRunner().invoke(cli, ["check", str(project), "--server", url], env=env)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
    assert report.exit_code == 1, report.output
    stale_pin = next(p for p in json.loads(report.output)["pins"] if p["repo"] == str(STALE))
    (hit,) = stale_pin["advisories"]
    assert hit["id"].endswith("-inherited")
    assert hit["upstream_fix"].startswith(f"no fixed revision of this repo yet; the base {BASE} fixed it at {fix[:12]}")
    assert f"the base {BASE} fixed it at {fix[:12]}" in text.output
