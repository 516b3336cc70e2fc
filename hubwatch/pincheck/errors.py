"""Errors of `hubwatch check`: a bad acknowledgement file, a `--server` that did not answer (or not usefully)."""

from __future__ import annotations

__all__ = ["GitBranchError", "IgnoreConfigError", "IncompatibleServer", "NotAHubwatchServer", "ServerError", "ServerUnreachable"]


class ServerError(Exception):
    """The hubwatch server did not answer a check query usefully (an error status, not JSON, short)."""

    fix = "check that --server names a hubwatch web app (`hubwatch serve`) of this version"


class ServerUnreachable(ServerError):
    """The hubwatch server did not answer at all (connection refused, timed out, no such host)."""

    fix = "start `hubwatch serve` there, or correct --server's URL; without --server the local store answers"


class NotAHubwatchServer(ServerError):
    """Something answered at --server, but not a hubwatch web app: no identity (`/api/v1/identity`),
    or an answer without the `X-Hubwatch-API` header (a hub emulator, a plain server, a proxy's own
    page). The message names the URL asked and what answered (status, server, content type, first bytes)."""

    fix = ("point --server at the hubwatch web app's base URL (the one serving /api/v1/identity); "
           "behind a proxy include its path prefix")


class IncompatibleServer(ServerError):
    """A hubwatch web app answered, but speaks a JSON API version this hubwatch cannot read."""

    def __init__(self, message: str, server_version: str) -> None:
        super().__init__(message)
        self.fix = (f"run a hubwatch CLI of the server's release ({server_version}) against it, or point --server "
                    f"at a hubwatch web app of this release")


class IgnoreConfigError(ValueError):
    """An `[[ignore]]` entry (`.hubwatch.toml`, `[tool.hubwatch]`) or `--ignore` that cannot be read: the
    message names the file and the entry, `fix` says what to write instead."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


class GitBranchError(ValueError):
    """`check --fix --branch`: the scanned folder is not in a git work tree, the branch exists already, a
    file to rewrite has changes of its own, or git refused; the message says which, `fix` what to do."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix
