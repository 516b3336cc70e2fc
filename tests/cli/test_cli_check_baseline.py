"""Code from day one (issue 31): a repo that needs `trust_remote_code` from its first commit is
affected at that commit. Real histories (tests/data/histories: Qwen/Qwen-7B, microsoft/phi-1_5,
THUDM/chatglm-6b, each with custom code in its first stored revision) are watched and polled
through the emulator with the real huggingface_hub client, then pins at each v1 are checked."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from hubwatch.cli import _register, cli

REPOS = ("Qwen/Qwen-7B", "microsoft/phi-1_5", "THUDM/chatglm-6b")


def _first_commit(histories: Path, repo: str) -> str:
    with (histories / repo.replace("/", "__") / "HISTORY.tsv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return next(r["commit"] for r in rows if r["version"] == "v1")


def _run(env: dict[str, str], *args: str) -> Result:
    _register()
    return CliRunner().invoke(cli, list(args), env=env)


def test_pins_at_a_first_commit_with_custom_code_are_affected(
    tmp_path: Path, hubsim_factory: Any, histories_root: Path, database_url: str
) -> None:
    sim = hubsim_factory(at="v1")
    env = {"HUBWATCH_HUB_ENDPOINT": sim.url, "HUBWATCH_DATABASE_URL": database_url, "COLUMNS": "200"}
    for repo in REPOS:
        assert _run(env, "watch", "add", repo).exit_code == 0
    polled = _run(env, "poll")
    assert polled.exit_code == 0, polled.output
    firsts = {repo: _first_commit(histories_root, repo) for repo in REPOS}
    app = tmp_path / "app"
    app.mkdir()
    (app / "serve.py").write_text(
        "\n".join(
            f'AutoModel.from_pretrained("{repo}", revision="{sha}", trust_remote_code=True)'
            for repo, sha in firsts.items()
        )
        + "\n",
        encoding="utf-8",
    )
    result = _run(env, "check", str(app), "--json")
    assert result.exit_code == 1, result.output
    body = json.loads(result.output)
    by_repo = {p["repo"]: p for p in body["pins"]}
    assert set(by_repo) == set(REPOS)
    for repo, pin in by_repo.items():
        assert pin["status"] == "affected", (repo, pin)
        assert pin["fails_gate"] is True, (repo, pin)
        kinds = {a["direction"] for a in pin["advisories"]}
        assert "hazard" in kinds, (repo, pin)
    text = _run(env, "check", str(app))
    assert text.exit_code == 1
    assert text.output.splitlines()[-1].startswith("3 failing the gate:"), text.output
    assert text.output.count("custom_code  hazard") == 3, text.output


def test_the_model_page_of_a_first_commit_with_custom_code_names_the_hazard(
    hubsim_factory: Any, database_url: str
) -> None:
    from fastapi.testclient import TestClient

    from hubwatch.feeds import create_app
    from hubwatch.settings import Settings
    from hubwatch.storage import Store

    sim = hubsim_factory(at="v1")
    env = {"HUBWATCH_HUB_ENDPOINT": sim.url, "HUBWATCH_DATABASE_URL": database_url}
    assert _run(env, "watch", "add", "Qwen/Qwen-7B").exit_code == 0
    assert _run(env, "poll").exit_code == 0
    with Store.open(database_url) as store, TestClient(create_app(Settings(), store)) as client:
        html = client.get("/models/Qwen/Qwen-7B").text
    assert "carries no hazard" not in html
    assert "A pin at the latest revision carries 1 hazard (worst: high)" in " ".join(html.split())
    assert "custom_code/high: custom code added" in html
