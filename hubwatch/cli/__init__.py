"""The `hubwatch` command: one click group; each command group lives in its own module, imported when it runs."""

from __future__ import annotations

import importlib
import sys
from typing import NamedTuple, cast

import click

from hubwatch import __version__
from hubwatch.domain.clock import Clock, system_clock

__all__ = ["COMMANDS", "CommandEntry", "cli", "command_clock", "main"]


class CommandEntry(NamedTuple):
    """Where a command is defined, and the first paragraph of its help (what `hubwatch --help` shortens)."""

    module: str
    help: str


# Every command of the group: `hubwatch --help` lists them from here without importing a command
# module (each costs milliseconds of click decorators and imports), and a command's module is
# imported when the command runs. tests/cli/test_cli_lazy.py checks this table against the commands
# themselves: the same names, the modules that define them, the same short help at any width.
COMMANDS: dict[str, CommandEntry] = {
    "advisories": CommandEntry("hubwatch.cli.advisories",
                               "List the OSV advisories hubwatch has published (all repos, or one)."),
    "check": CommandEntry("hubwatch.cli.check",
                          "Scan PATH for pinned model revisions and report the advisories that affect them."),
    "demo": CommandEntry("hubwatch.cli.run", "Replay Llama-2-7b-hf's real history through the built-in hub "
                                             "emulator; no network needed."),
    "diff": CommandEntry("hubwatch.cli.poll", "What changed in ORG/NAME between two stored revisions OLD and NEW "
                                              "(commit shas or prefixes)."),
    "estimate": CommandEntry("hubwatch.cli.estimate", "Estimate parameters, memory per method, batch per card and "
                                                      "training cost of TARGETS."),
    "export": CommandEntry("hubwatch.cli.advisories", "Export what hubwatch has published, as files."),
    "history": CommandEntry("hubwatch.cli.poll", "Every stored revision of ORG/NAME with what changed in it."),
    "hubsim": CommandEntry("hubwatch.cli.hubsim", "Run the hub emulator: the hub API huggingface_hub uses, over a "
                                                  "folder of repo histories."),
    "notify": CommandEntry("hubwatch.cli.notify", "Send a message (Slack, Discord, Teams, e-mail, a signed webhook, "
                                                  "…) when watched repos change."),
    "poll": CommandEntry("hubwatch.cli.poll", "Poll watched repos now (all, or the ORG/NAME given); exit 1 when any "
                                              "failed, 3 when the hub's rate limit deferred some (inside a window "
                                              "another worker found spent, nothing is sent)."),
    "run": CommandEntry("hubwatch.cli.run", "Poll watched repos every HUBWATCH_POLL_INTERVAL_S seconds and serve the "
                                            "web app."),
    "serve": CommandEntry("hubwatch.cli.run", "Serve the web app only (pages, feeds, OSV API) from the store."),
    "settings": CommandEntry("hubwatch.cli.settings_cmd", "Show every HUBWATCH_* setting and the value in effect "
                                                          "(secrets hidden)."),
    "watch": CommandEntry("hubwatch.cli.watch", "Add, remove and list the repos hubwatch tracks."),
}


class _Commands(click.Group):
    """A group whose commands (`COMMANDS`) are imported on first use, not to list them in `--help`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if cmd_name not in self.commands and entry is not None:
            importlib.import_module(entry.module)  # the module adds its commands to this group
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their short help, as click lists them, from `COMMANDS` for those not imported."""
        rows: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            cmd = self.commands.get(name)
            if cmd is None:
                cmd = click.Command(name, help=COMMANDS[name].help)  # click shortens it as it would the command's
            if not cmd.hidden:
                rows.append((name, cmd))
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])


@click.group(cls=_Commands)
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
    # Every command module imported at once (tests that walk `cli.commands`); `main` imports each as it runs.
    from hubwatch.cli import commands  # noqa: F401


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `hubwatch` script."""
    from hubwatch.cli.errors import run_cli

    sys.exit(run_cli(cli, argv))
