"""`hubwatch poll`, `history` and `diff`: fetch new revisions now and read what was stored."""

from __future__ import annotations

import json
from datetime import timezone
from typing import TYPE_CHECKING, Any

import click

from hubwatch.cli import cli, command_clock
from hubwatch.cli.console import err_console, escape, out_console
from hubwatch.cli.errors import EXIT_FAILED
from hubwatch.cli.params import REPO_ID
from hubwatch.domain.records import ChangeRecord, RepoId

if TYPE_CHECKING:
    from hubwatch.tracker.poller import PollOutcome
    from hubwatch.wiring import Runtime

__all__ = ["diff", "history", "poll"]

_SEVERITY_STYLE = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan", "info": "dim"}
_LONG_HISTORY = 200  # a history longer than this, printed whole, gets a hint about --limit


def _change_json(change: ChangeRecord) -> dict[str, Any]:
    return {
        "kind": change.kind.value,
        "severity": change.severity.value,
        "path": change.path,
        "summary": change.summary,
        "direction": change.direction,
    }


def _outcome_line(outcome: PollOutcome) -> str:
    from hubwatch.tracker.poller import Failed

    line = _outcome_text(outcome)
    renamed = None if isinstance(outcome, Failed) else outcome.renamed_from
    line = line if renamed is None else f"{line} [yellow](renamed from {escape(renamed)})[/yellow]"
    due = None if isinstance(outcome, Failed) else outcome.conversion_due
    if due is not None:  # a dataset head kept before the hub converted it: `hubwatch run` asks again then
        line += f" [dim]— its parquet conversion is not out yet; asked again from {due.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC[/dim]"
    return line


def _outcome_text(outcome: PollOutcome) -> str:
    from hubwatch.tracker.poller import Failed, NewRevisions

    if isinstance(outcome, NewRevisions):
        n = len(outcome.shas)
        return f"[green]new[/green]       {escape(outcome.repo)}: {n} new revision{'s' if n != 1 else ''} stored"
    if isinstance(outcome, Failed) and outcome.deferred:
        kept = f" ({len(outcome.saved)} revisions stored before it)" if outcome.saved else ""
        return f"[yellow]deferred[/yellow]  {escape(outcome.reason)}{kept} [dim]— not counted as a failure[/dim]"
    if isinstance(outcome, Failed):
        kept = f" ({len(outcome.saved)} revisions stored before it)" if outcome.saved else ""
        return f"[red]failed[/red]    {escape(outcome.reason)}{kept} [dim]— fix: {escape(outcome.fix)}[/dim]"
    if outcome.rewritten:
        n = len(outcome.rewritten)
        return (
            f"[yellow]rewritten[/yellow] {escape(outcome.repo)}: force-push back to {escape(outcome.head[:12])}; "
            f"{n} stored revision{'s' if n != 1 else ''} no longer on the main branch"
        )
    return f"[dim]unchanged[/dim] {escape(outcome.repo)}"


def _deliver_notifications(rt: Runtime) -> None:
    """After a poll, deliver the messages its revisions queued (`hubwatch notify`); a failed
    delivery is retried by the next poll, `notify flush` or `hubwatch run`."""
    from hubwatch.notify.sender import Sender

    report = Sender(rt.store, rt.settings, clock=rt.clock).flush()
    if report.total:
        err_console().print(escape(f"notifications: {report.sent} sent, {report.retried} to retry, {report.dead} dead"))


@cli.command()
@click.argument("repos", nargs=-1, type=REPO_ID, metavar="[ORG/NAME]...")
def poll(repos: tuple[RepoId, ...]) -> None:
    """Poll watched repos now (all, or the ORG/NAME given); exit 1 when any failed, 3 when the hub's
    rate limit deferred some (inside a window another worker found spent, nothing is sent)."""
    from rich.progress import Progress, SpinnerColumn, TextColumn

    from hubwatch.tracker.poller import Failed, failed, poll_repos
    from hubwatch.wiring import open_runtime

    out, err = out_console(), err_console()
    with open_runtime(clock=command_clock()) as rt:
        watched = [s.repo for s in rt.store.repos.watched()]
        targets = list(repos) or watched
        unknown = [str(r) for r in targets if r not in set(watched)]
        if unknown:
            raise click.UsageError(f"not watched: {', '.join(unknown)}; add with `hubwatch watch add`")
        if not targets:
            out.print("no repos watched: `hubwatch watch add ORG/NAME`")
            return
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), console=err, transient=True) as bar:
            task = bar.add_task("polling", total=len(targets))

            def progress(repo: RepoId, text: str) -> None:
                bar.update(task, description=escape(f"{repo} {text}"))  # the text holds a commit title

            def done(outcome: PollOutcome) -> None:
                bar.advance(task)
                if isinstance(outcome, Failed) and outcome.token_rejected:
                    return  # said once, as the command's error (exit 3)
                out.print(_outcome_line(outcome), highlight=False, soft_wrap=True)

            outcomes = poll_repos(targets, hub=rt.hub, store=rt.store, settings=rt.settings,
                                  progress=progress, on_outcome=done, clock=rt.clock)
        from hubwatch.tracker.derivatives import after_poll, report_lines  # derivatives: refreshed when due, inheritance checked
        for line in report_lines(after_poll(rt.store, rt.hub, rt.settings, rt.clock)):
            out.print(escape(line), highlight=False, soft_wrap=True)
        _deliver_notifications(rt)
    rejected = [o for o in failed(outcomes) if o.token_rejected]
    if rejected:
        from hubwatch.tracker.errors import TokenRejected

        raise TokenRejected("the hub rejected the token (401 Invalid credentials in Authorization header); no repo was polled after it")
    if any(not o.deferred for o in failed(outcomes)):
        click.get_current_context().exit(EXIT_FAILED)
    deferred = [o for o in failed(outcomes) if o.deferred]
    if deferred:
        from hubwatch.tracker.errors import RateLimited

        wait = max((o.retry_after or 0.0 for o in deferred), default=0.0)
        raise RateLimited(f"the hub's rate limit deferred {len(deferred)} of {len(outcomes)} repos for about "
                          f"{wait:.0f} s; they were not polled and no failure was counted", retry_after=wait)


@cli.command()
@click.argument("repo", type=REPO_ID, metavar="ORG/NAME")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (revisions oldest first).")
@click.option("--limit", "-n", type=click.IntRange(min=1), default=None, metavar="N",
              help="Only the newest N revisions (still listed oldest first); read as one page, however long the "
                   "history.")
def history(repo: RepoId, as_json: bool, limit: int | None) -> None:
    """Every stored revision of ORG/NAME with what changed in it.

    A long history is read and printed whole; `--limit N` shows the newest N revisions only.
    """
    from rich.table import Table

    from hubwatch.wiring import open_runtime

    with open_runtime(clock=command_clock()) as rt:
        if limit is None:
            entries = rt.store.history(repo)
        else:
            entries = rt.store.revisions.history_page(repo, limit=limit)[0][::-1]  # newest first: turned oldest first
        total = len(entries) if limit is None else rt.store.revisions.revision_count(repo)
        state = rt.store.repo_state(repo)
        rewrites = rt.store.revisions.rewrites(repo)
        restores = rt.store.revisions.restores(repo) if rewrites else []
        gone = rt.store.revisions.off_main_branch(repo)
    if not entries:
        if state is not None and state.watched and state.last_error:
            raise click.UsageError(f"no revisions stored; the last poll failed: {state.last_error}")
        raise click.UsageError(f"{repo}: no revisions stored (watch it and run `hubwatch poll {repo}`)")
    if as_json:
        rows = [
            {
                "sha": e.revision.sha,
                "parent": e.revision.parent,
                "date": e.revision.date.isoformat(),
                "title": e.revision.title,
                "changes": [_change_json(c) for c in e.changes],
                "advisories": list(e.advisory_ids),
            }
            for e in entries
        ]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    shown = f"{len(entries)} revisions" if len(entries) == total else f"the newest {len(entries)} of {total} revisions"
    table = Table(title=f"{escape(repo)}: {shown}, oldest first", show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("commit", no_wrap=True)
    table.add_column("date", no_wrap=True)
    table.add_column("what changed", overflow="fold")
    for e in entries:
        lines = [f"[bold]{escape(e.revision.title)}[/bold]"]
        if e.revision.sha in gone:
            lines.append("[yellow]no longer on the main branch (force-push)[/yellow]")
        lines += [
            f"[{_SEVERITY_STYLE[c.severity.value]}]{c.kind.value}/{c.severity.value}[/] {escape(c.summary)}"
            for c in e.changes
        ] or ["[dim]no change[/dim]"]
        lines += [f"[dim]advisory {escape(a)}[/dim]" for a in e.advisory_ids]
        table.add_row(str(e.position), escape(e.revision.sha[:12]), e.revision.date.strftime("%Y-%m-%d"), "\n".join(lines))
    out = out_console()
    out.print(table)
    if limit is None and total > _LONG_HISTORY:
        err_console().print(f"[dim]{total} revisions: `hubwatch history {escape(repo)} --limit 20` shows the newest "
                            "20 only[/dim]")
    moves = [(r.detected_at, "[yellow]history rewritten[/yellow]", r.old_head, r.new_head, "dropped", r.dropped)
             for r in rewrites]
    moves += [(r.detected_at, "[green]history restored[/green]", r.old_head, r.new_head, "back on the main line",
               r.restored) for r in restores]
    for seen, what, old, new, verb, shas in sorted(moves, key=lambda m: m[0]):  # oldest first, as the table
        out.print(f"{what} (seen {seen:%Y-%m-%d %H:%M} UTC): "
                  + escape(f"{old[:12]} → {new[:12]}, {verb} {', '.join(s[:12] for s in shas)}"))


@cli.command()
@click.argument("repo", type=REPO_ID, metavar="ORG/NAME")
@click.argument("old")
@click.argument("new")
@click.option("--json", "as_json", is_flag=True, help="Print the changes as JSON.")
def diff(repo: RepoId, old: str, new: str, as_json: bool) -> None:
    """What changed in ORG/NAME between two stored revisions OLD and NEW (commit shas or prefixes)."""
    from hubwatch.diff import diff_repo_snapshots
    from hubwatch.tracker.pipeline import load_baseline
    from hubwatch.wiring import open_runtime

    with open_runtime(clock=command_clock()) as rt:
        shas = []
        for ref in (old, new):
            entry = rt.store.revision(repo, ref) if len(ref) >= 7 else None
            if entry is None:
                raise click.UsageError(f"{repo}: no stored revision {ref!r} (see `hubwatch history {repo}`)")
            shas.append(entry.revision.sha)
        before = load_baseline(rt.store, repo, shas[0]).snapshot
        after = load_baseline(rt.store, repo, shas[1]).snapshot
    changes = diff_repo_snapshots(repo.repo_type, before, after)
    if as_json:
        payload = {"repo": str(repo), "old": shas[0], "new": shas[1], "changes": [_change_json(c) for c in changes]}
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    out = out_console()
    out.print(escape(f"{repo} {shas[0][:12]} → {shas[1][:12]}: {len(changes)} change(s)"))
    for c in changes:
        style = _SEVERITY_STYLE[c.severity.value]
        out.print(f"  [{style}]{c.kind.value}/{c.severity.value}[/] {escape(c.path)}: {escape(c.summary)}")
