"""`hubwatch watch add|remove|list`: which repos are tracked."""

from __future__ import annotations

import json

import click

from hubwatch.cli import cli, command_clock
from hubwatch.cli.console import escape, out_console
from hubwatch.cli.params import REPO_ID
from hubwatch.domain.records import RepoId, RepoType

__all__ = ["watch"]


@cli.group()
def watch() -> None:
    """Add, remove and list the repos hubwatch tracks."""


_RELATIONS = ("finetune", "quantized", "adapter", "merge")


def _relations(value: str | None) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(v.strip() for v in (value or "").split(",") if v.strip()))
    bad = [v for v in chosen if v not in _RELATIONS]
    if bad:
        raise click.BadParameter(f"unknown relation {', '.join(bad)}: use a comma-separated list of {','.join(_RELATIONS)}",
                                 param_hint="--relation")  # fmt: skip
    return chosen


@watch.command("add")
@click.argument("repos", nargs=-1, required=True, type=REPO_ID, metavar="ORG/NAME...")
@click.option("--derivatives", is_flag=True,
              help="Also watch the models whose card names ORG/NAME as base_model (found through the hub's "
                   "listing, read again every HUBWATCH_DERIVATIVES_REFRESH_S in `hubwatch run`).")  # fmt: skip
@click.option("--relation", "relation", default=None, metavar="LIST",
              help="With --derivatives: only these relations (comma-separated: finetune,quantized,adapter,merge).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="With --derivatives: at most N derivatives.")
@click.option("--type", "repo_type", type=click.Choice(["model", "dataset"]), default=None,
              help="Read every ORG/NAME as this kind of repo (a dataset may also be given as datasets/ORG/NAME).")
def add(repos: tuple[RepoId, ...], derivatives: bool, relation: str | None, limit: int | None,
        repo_type: str | None) -> None:  # fmt: skip
    """Track ORG/NAME (models) or datasets/ORG/NAME repos (their whole history is backfilled on the next poll)."""
    from hubwatch.wiring import open_runtime

    if repo_type is not None:
        kind = RepoType(repo_type)
        clashing = [str(r) for r in repos if r.is_dataset and kind is RepoType.MODEL]
        if clashing:
            raise click.BadParameter(f"{', '.join(clashing)} is a dataset id, not a model", param_hint="--type")
        repos = tuple(RepoId(r.org, r.name, kind) for r in repos)
    relations = _relations(relation)
    if derivatives and any(r.is_dataset for r in repos):
        raise click.UsageError("--derivatives follows a model's base_model links: datasets have none")
    if (relations or limit is not None) and not derivatives:
        raise click.UsageError("--relation and --limit choose derivatives: add --derivatives")
    out = out_console()
    with open_runtime(clock=command_clock()) as rt:
        for repo in repos:
            if not derivatives:
                added = rt.store.watch(repo)
                out.print(f"{'watching' if added else 'already watching'} {escape(repo)}")
                continue
            from hubwatch.tracker.derivatives import watch_with_derivatives

            found = watch_with_derivatives(rt.store, rt.hub, repo, relations, limit, rt.clock)
            out.print(f"watching {escape(repo)} and {len(found)} derivative(s)", highlight=False)
            for derived, rel in found:
                out.print(f"  {escape(derived)} ({escape(rel)})", highlight=False)


@watch.command("remove")
@click.argument("repos", nargs=-1, required=True, type=REPO_ID, metavar="ORG/NAME...")
def remove(repos: tuple[RepoId, ...]) -> None:
    """Stop tracking ORG/NAME repos (their stored history is kept)."""
    from hubwatch.wiring import open_runtime

    out = out_console()
    missing = []
    with open_runtime(clock=command_clock()) as rt:
        for repo in repos:
            if rt.store.unwatch(repo):
                out.print(f"stopped watching {escape(repo)}")
            else:
                missing.append(str(repo))
    if missing:
        raise click.UsageError(f"not watched: {', '.join(missing)} (see `hubwatch watch list`)")


@watch.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_(as_json: bool) -> None:
    """List tracked repos with their poll state."""
    from rich.table import Table

    from hubwatch.wiring import open_runtime

    from hubwatch.tracker.derivatives import derivatives

    with open_runtime(clock=command_clock()) as rt:
        states = rt.store.repos.watched()
        bases = {m.repo: m for m in derivatives(rt.store, rt.clock).members()}
    if as_json:
        rows = [
            {
                "repo": str(s.repo),
                "type": s.repo.hub_repo_type,
                "state": s.state,
                "head": s.head_sha,
                "revisions": s.revision_count,
                "last_polled_at": s.last_polled_at.isoformat() if s.last_polled_at else None,
                "next_poll_at": s.next_poll_at.isoformat() if s.next_poll_at else None,
                "last_error": s.last_error,
                "base": str(bases[s.repo].base) if s.repo in bases else None,
                "relation": bases[s.repo].relation if s.repo in bases else None,
            }
            for s in states
        ]
        click.echo(json.dumps(rows, indent=2))
        return
    table = Table(title="watched repos")
    # The repo id is what people copy: never cut; the error folds instead.
    table.add_column("repo", no_wrap=True, min_width=max((len(str(s.repo)) for s in states), default=4))
    table.add_column("state", overflow="fold")
    table.add_column("revs", justify="right", no_wrap=True)
    table.add_column("head", overflow="fold")
    table.add_column("last polled", overflow="fold")
    if bases:
        table.add_column("base (relation)", overflow="fold")
    for s in states:
        style = {"ok": "green", "new": "cyan"}.get(s.state, "red")
        table.add_row(
            escape(s.repo),
            f"[{style}]{escape(s.state)}[/{style}]",
            str(s.revision_count),
            escape((s.head_sha or "")[:12]),
            s.last_polled_at.strftime("%Y-%m-%d %H:%M") if s.last_polled_at else "never",
            *([escape(f"{bases[s.repo].base} ({bases[s.repo].relation})") if s.repo in bases else ""] if bases else []),
        )
    out = out_console()
    out.print(table if states else "no repos watched: `hubwatch watch add ORG/NAME`")
    # Errors are whole sentences: one line each under the table, not squeezed into a column.
    for s in states:
        if s.last_error:
            out.print(f"[red]last error[/red] {escape(s.repo)}: {escape(s.last_error.removeprefix(f'{s.repo}: '))}")
