"""The `hubwatch` command: one click group; each command group lives in its own module."""

from __future__ import annotations

import sys

import click

from hubwatch import __version__

__all__ = ["cli", "main"]


@click.group()
@click.version_option(__version__, prog_name="hubwatch")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Watch Hugging Face model repos; publish what changed as OSV advisories, feeds and pages."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _register() -> None:
    # Each module adds its commands to `cli`; imported here so `hubwatch --help` lists them all.
    from hubwatch.cli import commands  # noqa: F401


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `hubwatch` script."""
    from hubwatch.cli.errors import run_cli

    _register()
    sys.exit(run_cli(cli, argv))
