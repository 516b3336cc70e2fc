"""The commands as people type them: `watch add --derivatives`, `watch list` with base and relation,
`poll` reporting the inherited advisory; bad relations refused with the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from hubwatch.cli import _register, cli


def test_watch_add_derivatives_list_and_poll(hubsim_factory: Any, database_url: str, data_dir: Path) -> None:
    sim = hubsim_factory(root=data_dir / "derivatives", at="v1")
    env = {"HUBWATCH_DATABASE_URL": database_url, "HUBWATCH_HUB_ENDPOINT": sim.url, "COLUMNS": "200"}
    _register()
    runner = CliRunner()
    added = runner.invoke(cli, ["watch", "add", "famlab/base", "--derivatives", "--relation", "finetune"], env=env)
    assert added.exit_code == 0, added.output
    assert "watching famlab/base and 2 derivative(s)" in added.output and "famlab/chat-own" not in added.output
    added = runner.invoke(cli, ["watch", "add", "famlab/base", "--derivatives"], env=env)
    assert "famlab/chat-own (adapter)" in added.output

    rows = json.loads(runner.invoke(cli, ["watch", "list", "--json"], env=env).output)
    by_repo = {r["repo"]: (r["base"], r["relation"]) for r in rows}
    assert by_repo == {"famlab/base": (None, None), "famlab/chat-fixed": ("famlab/base", "finetune"),
                       "famlab/chat-own": ("famlab/base", "adapter"), "famlab/chat-stale": ("famlab/base", "finetune")}
    table = runner.invoke(cli, ["watch", "list"], env=env).output
    assert "famlab/base (adapter)" in table

    assert runner.invoke(cli, ["poll"], env=env).exit_code == 0
    sim.advance("famlab/base")
    polled = runner.invoke(cli, ["poll"], env=env)
    assert polled.exit_code == 0, polled.output
    assert "famlab/chat-stale: inherited advisory x_HUBWATCH-" in polled.output
    assert "still carries the chat template that famlab/base fixed at" in polled.output
    assert "famlab/chat-own: note:" in polled.output and "famlab/chat-fixed:" not in polled.output


def test_bad_relation_and_options_without_derivatives_are_refused(database_url: str) -> None:
    _register()
    env = {"HUBWATCH_DATABASE_URL": database_url}
    bad = CliRunner().invoke(cli, ["watch", "add", "a/b", "--derivatives", "--relation", "finetune,clone"], env=env)
    assert bad.exit_code == 2 and "unknown relation clone" in bad.output and "finetune,quantized,adapter,merge" in bad.output
    lone = CliRunner().invoke(cli, ["watch", "add", "a/b", "--limit", "3"], env=env)
    assert lone.exit_code == 2 and "add --derivatives" in lone.output
