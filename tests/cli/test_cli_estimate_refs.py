"""`hubwatch estimate ORG/NAME --revision R` with R a pull request (`refs/pr/1`), a tag, a branch or
HEAD, against the hub emulator: each estimates the commit the ref points at."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from hubwatch.cli import main

TINY = "hubsim-test/tiny-llama"
V1 = "1" * 40


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["estimate", *args])
    return int(exit_info.value.code or 0), capsys.readouterr().out


@pytest.fixture
def sim(hubsim_factory: Any, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    started = hubsim_factory(root=data_dir / "hubsim", at="v2")  # main at v2; v3 only in a pull request
    monkeypatch.setenv("HUBWATCH_HUB_ENDPOINT", started.url)
    for body in ({"pr": 1, "at": "v3"}, {"tag": "first", "at": "v1"}, {"branch": "old", "at": "v1"}):
        assert httpx.post(f"{started.url}/_sim/{TINY}/refs", json=body).status_code == 200
    return started


def test_a_pull_request_revision_is_estimated(capsys: pytest.CaptureFixture[str], sim: Any) -> None:
    pr = next(c for c in sim.state.history(TINY).commits if c.version == "v3").sha
    code, out = run(capsys, TINY, "--revision", "refs/pr/1", "--json")
    assert code == 0, out
    (entry,) = json.loads(out)
    assert entry["revision"] == pr != sim.head(TINY)
    assert entry["params"]["checkpoint"] > 2_000_000_000  # v3's 4.2 GB shard, read by range requests


@pytest.mark.parametrize("revision", ["first", "old", "refs/tags/first", "refs/heads/old"])
def test_a_tag_or_branch_is_estimated_at_its_commit(capsys: pytest.CaptureFixture[str], sim: Any,
                                                    revision: str) -> None:
    code, out = run(capsys, TINY, "--revision", revision, "--json")
    assert code == 0, out
    assert json.loads(out)[0]["revision"] == V1


def test_head_is_main(capsys: pytest.CaptureFixture[str], sim: Any) -> None:
    code, out = run(capsys, TINY, "--revision", "HEAD", "--json")
    assert code == 0 and json.loads(out)[0]["revision"] == sim.head(TINY)
