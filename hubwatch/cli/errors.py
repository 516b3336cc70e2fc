"""The one place that turns errors into one-line messages with a fix, and exit codes."""

from __future__ import annotations

import sys

import click
from pydantic import ValidationError
from rich.console import Console

from hubwatch.storage.errors import StorageError
from hubwatch.domain.records import InvalidRepoId
from hubwatch.tracker.errors import HubError

__all__ = ["EXIT_FAILED", "EXIT_HUB", "EXIT_OK", "EXIT_STORE", "EXIT_USAGE", "run_cli", "settings_problem"]

# Fixed exit codes: scripts rely on them.
EXIT_OK = 0
EXIT_FAILED = 1  # the command ran and found failures (a repo failed to poll, a check failed)
EXIT_USAGE = 2  # bad arguments or input
EXIT_HUB = 3  # the hub refused or did not answer
EXIT_STORE = 4  # the database could not be opened, migrated or written

_err = Console(stderr=True)
_SETTINGS_FIX = "correct or unset those variables (`hubwatch settings --markdown` lists every setting)"


def settings_problem(exc: ValidationError) -> str:
    """One line naming each bad HUBWATCH_* variable, the value given and what is wrong with it."""
    from hubwatch.settings import Settings

    prefix = str(Settings.model_config.get("env_prefix", ""))
    parts = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err.get("loc", ())) or "?"
        given = err.get("input")
        shown = f" (got {given!r})" if isinstance(given, (str, int, float)) else ""
        parts.append(f"{prefix}{field}".upper() + f": {err.get('msg', 'invalid')}{shown}")
    return "bad setting: " + "; ".join(parts)


def run_cli(group: click.Group, argv: list[str] | None) -> int:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        rv = group.main(args=argv, prog_name="hubwatch", standalone_mode=False)
        if isinstance(rv, int):
            return rv
    except click.exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE
    except click.Abort:
        _err.print("aborted")
        return EXIT_FAILED
    except InvalidRepoId as exc:
        if debug:
            raise
        _err.print(f"[red]error:[/red] {exc}")
        return EXIT_USAGE
    except HubError as exc:
        if debug:
            raise
        _err.print(f"[red]error:[/red] {exc}\n[dim]fix:[/dim] {exc.fix}")
        return EXIT_HUB
    except StorageError as exc:
        if debug:
            raise
        _err.print(f"[red]error:[/red] {exc}\n[dim]fix:[/dim] {exc.fix}")
        return EXIT_STORE
    except ValidationError as exc:
        if debug or exc.title != "Settings":
            raise
        _err.print(f"[red]error:[/red] {settings_problem(exc)}\n[dim]fix:[/dim] {_SETTINGS_FIX}")
        return EXIT_USAGE
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) or exc.code is None else EXIT_FAILED
    return EXIT_OK
