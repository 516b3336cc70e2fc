"""`hubwatch poll` with a token the hub rejects: exit 3, one line naming the token and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hubwatch.cli import main
from hubwatch.hubsim.modes import requests_seen


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], env: dict[str, str], *args: str) -> tuple[int, str]:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    captured = capsys.readouterr()
    return int(exit_.value.code or 0), captured.out + captured.err


def test_poll_exits_3_naming_the_rejected_token(
    tmp_path: Path, hubsim_factory: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = hubsim_factory(at="v1")
    env = {"HUBWATCH_DATABASE_URL": f"sqlite:///{tmp_path / 'hw.db'}", "HUBWATCH_HUB_ENDPOINT": sim.url,
           "HF_TOKEN": "hf_expired"}  # fmt: skip
    assert run(monkeypatch, capsys, env, "watch", "add", "Qwen/Qwen-7B", "google/gemma-2b-it")[0] == 0
    sim.set_faults(invalid_token="hf_expired")
    before = requests_seen(sim.state)
    code, output = run(monkeypatch, capsys, env, "poll")
    assert code == 3, output
    assert requests_seen(sim.state) - before == 1  # the first refusal stops the command
    lines = [line for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and "rejected the token" in errors[0]
    assert any(line.startswith("fix:") and "HF_TOKEN" in line for line in lines)
    assert not any(line.startswith("failed") for line in lines)
