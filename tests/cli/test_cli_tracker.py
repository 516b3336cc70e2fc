"""`hubwatch watch`, `poll`, `history` and `diff` end to end: real SQLite, the emulator over HTTP."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from hubwatch.cli import _register, cli

LLAMA = "meta-llama/Llama-2-7b-hf"
QWEN = "Qwen/Qwen-7B"


def history_rows(root: Path, repo: str) -> list[dict[str, str]]:
    text = (root / repo.replace("/", "__") / "HISTORY.tsv").read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))


def runner(db: Path, sim: Any):  # type: ignore[no-untyped-def]
    env = {"HUBWATCH_DATABASE_URL": f"sqlite:///{db}", "HUBWATCH_HUB_ENDPOINT": sim.url, "HF_TOKEN": ""}

    def invoke(*args: str) -> Result:
        _register()
        return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)

    return invoke


def test_watch_add_list_remove(tmp_path: Path, hubsim: Any) -> None:
    invoke = runner(tmp_path / "hw.db", hubsim)
    bad = invoke("watch", "add", LLAMA, "not-a-repo")
    assert bad.exit_code == 2 and "'not-a-repo' is not a repo id" in bad.output
    assert json.loads(invoke("watch", "list", "--json").stdout) == []  # nothing added on a bad id
    assert invoke("watch", "add", LLAMA, QWEN).exit_code == 0
    again = invoke("watch", "add", LLAMA)
    assert again.exit_code == 0 and "already watching" in again.output
    rows = json.loads(invoke("watch", "list", "--json").stdout)
    assert sorted(r["repo"] for r in rows) == sorted([LLAMA, QWEN])
    assert all(r["state"] == "new" and r["revisions"] == 0 for r in rows)
    table = invoke("watch", "list")
    assert table.exit_code == 0 and "Qwen/Qwen-7B" in table.output and "never" in table.output
    assert invoke("watch", "remove", QWEN).exit_code == 0
    assert [r["repo"] for r in json.loads(invoke("watch", "list", "--json").stdout)] == [LLAMA]
    missing = invoke("watch", "remove", QWEN)
    assert missing.exit_code == 2 and "not watched: Qwen/Qwen-7B" in missing.output


def test_poll_history_and_diff(tmp_path: Path, hubsim_factory: Any, histories_root: Path) -> None:
    sim = hubsim_factory(at="v1")
    invoke = runner(tmp_path / "hw.db", sim)
    invoke("watch", "add", LLAMA, QWEN)
    first = invoke("poll")
    assert first.exit_code == 0, first.output
    assert f"{LLAMA}: 1 new revision stored" in first.output
    for _ in range(5):
        sim.advance(LLAMA)
    second = invoke("poll", LLAMA)
    assert second.exit_code == 0 and f"{LLAMA}: 5 new revisions stored" in second.output
    assert "unchanged" in invoke("poll").output  # polling twice adds nothing

    history = invoke("history", LLAMA, "--json")
    assert history.exit_code == 0, history.output
    revisions = json.loads(history.stdout)
    rows = history_rows(histories_root, LLAMA)[:6]
    assert [r["sha"] for r in revisions] == [row["commit"] for row in rows]
    assert [r["parent"] for r in revisions] == [None] + [row["commit"] for row in rows[:-1]]
    assert [r["title"] for r in revisions] == [row["message"] for row in rows]
    assert [r["date"][:10] for r in revisions] == [row["date"] for row in rows]
    v5, v6 = revisions[4], revisions[5]
    assert [(c["kind"], c["severity"], c["path"], c["summary"]) for c in v5["changes"]] == [
        ("special_tokens", "high", "generation_config.json:pad_token_id", "pad_token_id 32000 → 0")
    ]
    assert {c["kind"] for c in v6["changes"]} == {"context"}
    assert set(v5["changes"][0]) >= {"kind", "severity", "path", "summary"}

    table = invoke("history", LLAMA)
    assert table.exit_code == 0 and rows[5]["commit"][:12] in table.output and "context/medium" in table.output

    diff = invoke("diff", LLAMA, rows[3]["commit"][:10], rows[5]["commit"], "--json")
    assert diff.exit_code == 0, diff.output
    body = json.loads(diff.stdout)
    assert body["old"] == rows[3]["commit"] and body["new"] == rows[5]["commit"]
    summaries = [c["summary"] for c in body["changes"]]
    assert "pad_token_id 32000 → 0" in summaries and "max_position_embeddings 2048 → 4096" in summaries
    unknown = invoke("diff", LLAMA, "0000000", rows[5]["commit"])
    assert unknown.exit_code == 2 and "no stored revision '0000000'" in unknown.output


def test_poll_reports_each_failure_and_exits_1(tmp_path: Path, hubsim: Any) -> None:
    invoke = runner(tmp_path / "hw.db", hubsim)
    invoke("watch", "add", "nobody/not-there", QWEN)
    result = invoke("poll")
    assert result.exit_code == 1
    failures = [line for line in result.output.splitlines() if line.startswith("failed")]
    assert len(failures) == 1
    assert "nobody/not-there" in failures[0] and "fix:" in failures[0]
    assert f"{QWEN}: 1 new revision stored" in result.output
    states = {r["repo"]: r for r in json.loads(invoke("watch", "list", "--json").stdout)}
    assert states["nobody/not-there"]["state"] == "not_found" and states[QWEN]["state"] == "ok"


def test_usage_errors(tmp_path: Path, hubsim: Any) -> None:
    invoke = runner(tmp_path / "hw.db", hubsim)
    not_watched = invoke("poll", LLAMA)
    assert not_watched.exit_code == 2 and "not watched: meta-llama/Llama-2-7b-hf" in not_watched.output
    empty = invoke("history", LLAMA)
    assert empty.exit_code == 2 and "no revisions stored" in empty.output
    assert invoke("history", "bad id").exit_code == 2


def test_entry_point_in_a_subprocess(tmp_path: Path, hubsim: Any) -> None:
    env = {**os.environ, "HUBWATCH_DATABASE_URL": f"sqlite:///{tmp_path / 'hw.db'}", "HUBWATCH_HUB_ENDPOINT": hubsim.url}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hubwatch", *args], env=env, capture_output=True, text=True, timeout=120
        )

    assert run("watch", "add", QWEN).returncode == 0
    poll = run("poll")
    assert poll.returncode == 0, poll.stderr
    history = json.loads(run("history", QWEN, "--json").stdout)
    assert len(history) == 1 and history[0]["parent"] is None
