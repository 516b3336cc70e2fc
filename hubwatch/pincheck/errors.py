"""Errors of `hubwatch check`: a bad acknowledgement file, a `--server` that did not answer (or not usefully)."""

from __future__ import annotations

__all__ = ["IgnoreConfigError", "ServerError", "ServerUnreachable"]


class ServerError(Exception):
    """The hubwatch server did not answer a check query usefully (an error status, not JSON, short)."""

    fix = "check that --server names a hubwatch web app (`hubwatch serve`) of this version"


class ServerUnreachable(ServerError):
    """The hubwatch server did not answer at all (connection refused, timed out, no such host)."""

    fix = "start `hubwatch serve` there, or correct --server's URL; without --server the local store answers"


class IgnoreConfigError(ValueError):
    """An `[[ignore]]` entry (`.hubwatch.toml`, `[tool.hubwatch]`) or `--ignore` that cannot be read: the
    message names the file and the entry, `fix` says what to write instead."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix
