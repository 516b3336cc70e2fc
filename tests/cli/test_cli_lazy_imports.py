"""`hubwatch --help` and `hubwatch estimate CONFIG` load no database, web or server layer, and
`hubwatch --help` no command module at all (the group lists them from `COMMANDS`).

Each runs in a fresh interpreter; what it imported is read from `sys.modules` afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
HEAVY = ("sqlalchemy", "sqlmodel", "alembic", "fastapi", "starlette", "uvicorn")
SCRIPT = """
import json, sys
from hubwatch.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
finally:
    print(json.dumps(sorted(sys.modules)), file=sys.__stderr__)
"""


def modules_loaded_by(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, timeout=120)
    last = done.stderr.strip().splitlines()[-1]
    return set(json.loads(last))


def loaded_by(*args: str) -> set[str]:
    return {m.split(".")[0] for m in modules_loaded_by(*args)}


@pytest.mark.parametrize(
    "args",
    [("--help",), ("poll", "--help"), ("estimate", str(DATA / "configs" / "BAAI__bge-m3" / "config.json"))],
    ids=["help", "poll-help", "estimate-config"],
)
def test_no_database_or_web_layer_is_imported(args: tuple[str, ...]) -> None:
    heavy = sorted(loaded_by(*args) & set(HEAVY))
    assert heavy == [], f"`hubwatch {' '.join(args)}` imported {heavy}: import them inside the commands that need them"


def test_a_command_that_needs_the_store_still_gets_it(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "HUBWATCH_DATABASE_URL": f"sqlite:///{tmp_path / 'hw.db'}"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, "watch", "list", "--json"], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.stdout.strip() == "[]"
    assert {"sqlalchemy", "alembic"} <= {m.split(".")[0] for m in json.loads(done.stderr.strip().splitlines()[-1])}


def test_help_lists_every_command_without_importing_one() -> None:
    from hubwatch.cli import COMMANDS

    loaded = modules_loaded_by("--help")
    commands = sorted({entry.module for entry in COMMANDS.values()} & loaded)
    assert commands == [], f"`hubwatch --help` imported the command modules {commands}"
    rooms = sorted(m for m in loaded if m.split(".")[:2] in (["hubwatch", r] for r in
                                                             ("storage", "tracker", "estimator", "pincheck", "feeds")))
    assert rooms == [], f"`hubwatch --help` imported {rooms}: the error table is made on the first error"


def test_the_command_table_is_the_commands_own() -> None:
    """COMMANDS names every command once, with the module that defines it and its help as click shortens it."""
    import click

    from hubwatch.cli import COMMANDS, _register, cli

    _register()  # every command module imported: each has added its commands to the group
    assert sorted(cli.commands) == sorted(COMMANDS), "add the command to (or drop it from) hubwatch.cli.COMMANDS"
    for name, cmd in cli.commands.items():
        entry = COMMANDS[name]
        assert cmd.callback is not None and cmd.callback.__module__ == entry.module, f"`{name}` is defined elsewhere"
        listed = click.Command(name, help=entry.help)
        for width in (20, 45, 60, 80, 120, 400):
            assert listed.get_short_help_str(width) == cmd.get_short_help_str(width), \
                f"COMMANDS[{name!r}].help is not the first paragraph of the command's help"



def test_estimating_a_decoder_config_loads_only_what_it_needs() -> None:
    """`hubwatch estimate` on a GPT-2 config.json: no PyYAML (only model cards are YAML), no estimate delta
    (one revision has none), and no builder of another family (encoder, encoder-decoder, vision, speech)."""
    loaded = modules_loaded_by("estimate", str(DATA / "configs" / "openai-community__gpt2" / "config.json"))
    assert "yaml" not in loaded
    assert "hubwatch.estimator.estimate_delta" not in loaded
    assert "hubwatch.estimator.architectures.decoder_only.decoders" in loaded
    others = sorted(m for m in loaded if m.startswith(tuple(f"hubwatch.estimator.architectures.{kind}" for kind in
                                                            ("encoder_only", "encoder_decoder", "multimodal"))))
    assert others == []
    # A config file: no --dataset reader, no repo ids/severities (only its files are records), and a
    # plain decoder does not load the blockwise (Nemotron-H) builder.
    assert "hubwatch.cli.estimate_dataset" not in loaded
    assert "hubwatch.domain.records" not in loaded
    assert "hubwatch.estimator.architectures.decoder_only.blockwise" not in loaded
