"""The `hubwatch` command: one click group; each command group lives in its own module."""

from __future__ import annotations

import sys
from typing import cast

import click

from hubwatch import __version__
from hubwatch.domain.clock import Clock, system_clock

__all__ = ["cli", "command_clock", "main"]


@click.group()
@click.version_option(__version__, prog_name="hubwatch")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Watch Hugging Face model repos; publish what changed as OSV advisories, feeds and pages."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    ctx.obj.setdefault("clock", system_clock)  # the one clock of this run; a test passes obj={"clock": …}


def command_clock() -> Clock:
    """The clock of the running command (chosen once, on the group's context); pass it to the runtime."""
    obj = click.get_current_context().find_object(dict)
    found = obj.get("clock") if obj is not None else None
    return cast(Clock, found) if callable(found) else system_clock


def _register() -> None:
    # Each module adds its commands to `cli`; imported here so `hubwatch --help` lists them all.
    from hubwatch.cli import commands  # noqa: F401


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `hubwatch` script."""
    from hubwatch.cli.errors import run_cli

    _register()
    sys.exit(run_cli(cli, argv))
