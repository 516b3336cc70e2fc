"""Errors of `hubwatch check --server`: the hubwatch web app asked did not answer, or not usefully."""

from __future__ import annotations

__all__ = ["ServerError", "ServerUnreachable"]


class ServerError(Exception):
    """The hubwatch server did not answer a check query usefully (an error status, not JSON, short)."""

    fix = "check that --server names a hubwatch web app (`hubwatch serve`) of this version"


class ServerUnreachable(ServerError):
    """The hubwatch server did not answer at all (connection refused, timed out, no such host)."""

    fix = "start `hubwatch serve` there, or correct --server's URL; without --server the local store answers"
