"""`watch add` in another case is the same repo; `poll` follows a rename upstream and says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from test_cli_tracker import runner


def test_watch_add_in_another_case_and_poll_through_a_rename(tmp_path: Path, hubsim: Any) -> None:
    invoke = runner(tmp_path / "hw.db", hubsim)
    assert invoke("watch", "add", "qwen/QWEN-7b").exit_code == 0
    again = invoke("watch", "add", "Qwen/Qwen-7B")
    assert again.exit_code == 0 and "already watching" in again.output
    assert invoke("poll").exit_code == 0
    [row] = json.loads(invoke("watch", "list", "--json").stdout)
    assert row["repo"] == "Qwen/Qwen-7B"  # the hub's spelling
    assert httpx.post(f"{hubsim.url}/_sim/Qwen/Qwen-7B/rename", json={"to": "qwen-archive/Qwen-7B"}).status_code == 200
    polled = invoke("poll")
    assert polled.exit_code == 0 and "renamed from Qwen/Qwen-7B" in " ".join(polled.output.split())
    [row] = json.loads(invoke("watch", "list", "--json").stdout)
    assert row["repo"] == "qwen-archive/Qwen-7B" and row["revisions"] >= 1
    assert invoke("history", "Qwen/Qwen-7B", "--json").exit_code == 0  # the old id still finds it
