"""Click parameter types shared by the command modules (repo ids parsed once, at the edge)."""

from __future__ import annotations

import click

from hubwatch.domain.records import InvalidRepoId, RepoId

__all__ = ["REPO_ID", "RepoIdType"]


class RepoIdType(click.ParamType[RepoId]):
    """`org/name` parsed into a RepoId; a bad id is a usage error (exit 2) naming the id."""

    name = "ORG/NAME"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> RepoId:
        if isinstance(value, RepoId):
            return value
        try:
            return RepoId.parse(str(value))
        except InvalidRepoId as exc:
            self.fail(str(exc), param, ctx)


REPO_ID = RepoIdType()
