"""The one place that turns errors into one-line messages with a fix, and exit codes."""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, TypeGuard

import click

from hubwatch.cli.console import err_console, escape

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "EXIT_FAILED",
    "EXIT_HUB",
    "EXIT_OK",
    "EXIT_STORE",
    "EXIT_USAGE",
    "exit_code_for",
    "meanings",
    "run_cli",
    "settings_problem",
]

# Fixed exit codes: scripts rely on them (README, "Exit codes").
EXIT_OK = 0
EXIT_FAILED = 1  # the command ran and found failures (a repo failed to poll, a check failed)
EXIT_USAGE = 2  # bad arguments or input
EXIT_HUB = 3  # the hub (or the hubwatch server `check --server` asks) refused or did not answer
EXIT_STORE = 4  # the database could not be opened, migrated or written

@functools.cache
def meanings() -> tuple[tuple[type[Exception], int], ...]:
    """What each known error means, by class, most specific first: an error gets the exit code of the
    first class it is an instance of (a test checks that no entry is shadowed by an earlier one).

    Made on the first error, so that `hubwatch --help` imports none of the rooms the errors come from."""
    from hubwatch.domain.records import InvalidRepoId
    from hubwatch.pincheck.errors import (
        GitBranchError, IgnoreConfigError, IncompatibleServer, NotAHubwatchServer, ServerError, ServerUnreachable,
    )
    from hubwatch.storage.errors import AmbiguousRevision, DatabaseUnavailable, MigrationFailed, StorageError
    from hubwatch.tracker.errors import HubError

    return (
        (InvalidRepoId, EXIT_USAGE),  # an org/name that is not a repo id
        (AmbiguousRevision, EXIT_USAGE),  # a sha prefix that matches several stored commits: give more of it
        (IgnoreConfigError, EXIT_USAGE),  # `check`: a bad [[ignore]] entry in .hubwatch.toml / pyproject.toml
        (GitBranchError, EXIT_USAGE),  # `check --fix --branch`: no work tree, the branch exists, files changed
        (DatabaseUnavailable, EXIT_STORE),
        (MigrationFailed, EXIT_STORE),
        (StorageError, EXIT_STORE),  # any other store failure (a bad database URL, a write that failed)
        (ServerUnreachable, EXIT_HUB),  # `check --server`: nothing answered at that URL
        (NotAHubwatchServer, EXIT_HUB),  # `check --server`: something answered, not a hubwatch web app
        (IncompatibleServer, EXIT_HUB),  # `check --server`: a hubwatch of a JSON API version this one does not speak
        (ServerError, EXIT_HUB),  # `check --server`: it answered, but not as a hubwatch server does
        (HubError, EXIT_HUB),  # the hub refused (not found, gated, rate-limited) or did not answer
    )


_SETTINGS_FIX = "correct or unset those variables (`hubwatch settings --markdown` lists every setting)"


def exit_code_for(exc: BaseException) -> int | None:
    """The exit code `exc` means (see `meanings`), or None for an error hubwatch does not know (a bug)."""
    for kind, code in meanings():
        if isinstance(exc, kind):
            return code
    if _is_settings_error(exc):
        return EXIT_USAGE
    return None


def _is_settings_error(exc: BaseException) -> TypeGuard[ValidationError]:
    pydantic = sys.modules.get("pydantic")  # not imported yet: no settings were read, none can be bad
    if pydantic is None or not isinstance(exc, pydantic.ValidationError):
        return False
    return getattr(exc, "title", None) == "Settings"


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


def _report(exc: BaseException) -> None:
    """`error: …` and, where the error knows one, `fix: …` on stderr; upstream text printed literally."""
    fix: object
    if _is_settings_error(exc):
        message, fix = settings_problem(exc), _SETTINGS_FIX
    else:
        message, fix = str(exc), getattr(exc, "fix", None)
    text = f"[red]error:[/red] {escape(message)}"
    if isinstance(fix, str) and fix:
        text += f"\n[dim]fix:[/dim] {escape(fix)}"
    err_console().print(text, highlight=False, soft_wrap=True)


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
        err_console().print("aborted")
        return EXIT_FAILED
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) or exc.code is None else EXIT_FAILED
    except Exception as exc:
        code = exit_code_for(exc)
        if code is None or debug:
            raise  # a bug (or --debug): the traceback is the message
        _report(exc)
        return code
    return EXIT_OK
