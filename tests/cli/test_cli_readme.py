"""The README is checked: its two set-up commands are the ones CI runs, and every command it names exists."""

from __future__ import annotations

import re
from pathlib import Path

from hubwatch.cli import cli

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def setup_commands() -> list[str]:
    block = re.search(r"```sh\n(.*?)```", README, re.S)
    assert block, "the README must open with a sh block of set-up commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_exactly_two_setup_commands() -> None:
    first, second = setup_commands()  # exactly two
    assert README.index("```sh") < 20, "the set-up commands must be the README's first lines"
    assert first.endswith("hubwatch demo")
    assert "pytest" in second


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert setup_commands()[1] in ci.splitlines()
    assert "HUBWATCH_TEST_POSTGRES_URL" in ci  # PostgreSQL is up in CI: its tests must run


def test_every_command_the_readme_names_exists() -> None:
    from hubwatch.cli import commands as _registered  # noqa: F401

    named = set(re.findall(r"(?:`|bin/)hubwatch ([a-z]+)", README))
    assert {"demo", "watch", "run", "poll", "estimate", "check"} <= named
    missing = sorted(name for name in named if name not in cli.commands)
    assert not missing, f"the README names commands that do not exist: {missing}"
