"""`hubwatch check [PATH]`: pinned model revisions in a code base, the advisories on them, and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hubwatch.cli import cli, command_clock
from hubwatch.cli.console import err_console
from hubwatch.cli.errors import EXIT_FAILED
from hubwatch.domain.records import Severity

if TYPE_CHECKING:
    from hubwatch.pincheck.formats import Move
    from hubwatch.pincheck.pins import ScanReport
    from hubwatch.pincheck.report import PinReport
    from hubwatch.settings import Settings

__all__ = ["check"]


def _reports(scan: ScanReport, server: str | None, settings: Settings, ignored: frozenset[str],
             warn: bool) -> list[PinReport]:
    import httpx

    from hubwatch.pincheck.pincheck import ServerSource, StoreSource, check_pins
    from hubwatch.wiring import open_store

    if server:
        with httpx.Client(base_url=server.rstrip("/"), timeout=settings.hub_timeout_s) as client:
            # A server that does not answer raises ServerUnreachable, one that is not a hubwatch web app
            # of an API this client speaks NotAHubwatchServer / IncompatibleServer: exit 3 with a fix
            # (cli/errors.py). Checked before anything is asked, even with no commit pin to look up.
            source = ServerSource(client)
            source.verify()
            return check_pins(scan.pins, source, ignored)
    store = open_store(settings)
    try:
        if warn and not store.repos.watched():
            err_console().print(
                "[yellow]warning:[/yellow] the local store watches no repos, so every pin is unknown: "
                "`hubwatch watch add ORG/NAME` then `hubwatch poll`, or use --server URL"
            )
        return check_pins(scan.pins, StoreSource(store), ignored)
    finally:
        store.close()


# The choices of --format (hubwatch.pincheck.formats.FORMATS; written out so `--help` imports no scanner).
_FORMATS = ("table", "json", "sarif", "github", "junit", "markdown")


@cli.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path), default=Path("."))
@click.option("--format", "fmt", type=click.Choice(_FORMATS), default=None,
              help="How to report: table (the default), json, sarif (code scanning), github (workflow commands), "
                   "junit (test reports), markdown (a pull-request comment).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (the same as --format json).")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE",
              help="Write the report to FILE instead of stdout (any --format but table).")
@click.option("--summary-file", type=click.Path(dir_okay=False, path_type=Path), envvar="GITHUB_STEP_SUMMARY",
              default=None, metavar="FILE",
              help="With --format github: append the Markdown report to FILE (default: $GITHUB_STEP_SUMMARY, the "
                   "job summary GitHub Actions sets).")
@click.option(
    "--fail-on",
    type=click.Choice([s.value for s in Severity]),
    default="high",
    show_default=True,
    help="Exit 1 when an advisory (not ignored) at or above this severity affects a pin.",
)
@click.option("--server", default=None, metavar="URL",
              help="Ask a hubwatch web app (its base URL, checked at /api/v1/identity) instead of the local store.")
@click.option("--ignore", "ignore_ids", multiple=True, metavar="ID",
              help="Acknowledge this advisory id (repeatable); it is still listed, never failing.")
@click.option("--strict", is_flag=True,
              help="Exit 1 also when a pin is unknown (never seen, ambiguous, computed) or on a commit a force-push "
                   "upstream dropped.")
@click.option("--fix", is_flag=True,
              help="Rewrite each affected pin, and each pin a force-push dropped from the main line, to its suggested "
                   "commit, in place.")
@click.option("--dry-run", is_flag=True, help="With --fix: print the diff, write nothing.")
@click.option("--branch", default=None, metavar="NAME",
              help="With --fix: first create branch NAME (from HEAD) in the scanned folder's git repo, and rewrite there.")
@click.option("--commit", "do_commit", is_flag=True,
              help="With --fix --branch: commit the rewritten files, naming each pin moved and the advisories it "
                   "resolves.")
def check(path: Path, fmt: str | None, as_json: bool, output: Path | None, summary_file: Path | None, fail_on: str,
          server: str | None, ignore_ids: tuple[str, ...], strict: bool, fix: bool, dry_run: bool,
          branch: str | None, do_commit: bool) -> None:
    """Scan PATH for pinned model revisions and report the advisories that affect them.

    Unpinned uses (no revision, or main) are warnings; a pin the database does not know is
    reported as unknown, never as safe. Advisories acknowledged in .hubwatch.toml (or
    [tool.hubwatch] in pyproject.toml) or with --ignore are listed as ignored and never fail.
    Each affected pin, and each pin whose commit a force-push upstream dropped, gets the revision to
    move to; --fix writes it (with --branch on a new git branch, with --commit committed), then reports
    the pins as they stand after the rewrite. Each pin says whether it fails the gate and why. --format
    sarif, github, junit and markdown report for CI (docs/ci.md). Exit 1 when an advisory not ignored,
    at or above --fail-on, affects a pin (and, with --strict, when a pin is unknown or on a dropped
    commit); exit 3 when --server is not a hubwatch web app of an API version this one speaks.
    """
    from hubwatch.cli.check_render import print_fixes, report_json, report_table
    from hubwatch.pincheck.fix import apply_fix, plan_fixes, unified_diff
    from hubwatch.pincheck.formats import CheckedRun, Move
    from hubwatch.pincheck.ignore import load_acknowledgements
    from hubwatch.pincheck.pins import scan_path
    from hubwatch.settings import load_settings

    fmt = _format(fmt, as_json, output)
    _check_fix_options(fix, dry_run, branch, do_commit)
    if server and not server.startswith(("http://", "https://")):
        raise click.BadParameter(f"{server!r} is not an http(s) URL", param_hint="--server")
    table = fmt == "table"
    acks = load_acknowledgements(path, command_clock()().date(), ignore_ids)
    settings = load_settings()
    scan = scan_path(path)
    threshold = Severity(fail_on)
    reports = _reports(scan, server, settings, acks.ids, warn=True)
    # The compare page a suggestion links: the server asked, else HUBWATCH_PUBLIC_URL when it is set.
    web_url = server or (settings.public_url if settings.public_url_given else None)
    failed = _fails(reports, threshold, strict)
    fixed: list[dict[str, Any]] | None = None
    diff: str | None = None
    after: list[PinReport] | None = None
    moves: list[Move] = []
    skipped = scan.skipped
    if fix:
        targets = [(r.pin, r.suggestion.commit) for r in reports if r.moves and r.suggestion]
        fixes, left = plan_fixes(path, targets, scan.pins)
        fixed = [{"path": e.pin.path, "line": e.pin.line, "cell": e.pin.cell, "repo": str(e.pin.repo),
                  "old": e.old, "new": e.new, "written": not dry_run} for f in fixes for e in f.edits]
        fixed += [{"path": p.path, "line": p.line, "cell": p.cell, "repo": str(p.repo), "old": p.revision,
                   "new": None, "written": False, "why": why} for p, why in left]
        if table:
            report_table(reports, scan.skipped, threshold, acks, strict, web_url)
        if fmt != "json":
            print_fixes(fixes, left, dry_run, to_stderr=not table)
        if dry_run:
            diff = "".join(unified_diff(f) for f in fixes)
            if fmt != "json":
                (click.echo if table else _echo_err)(diff, nl=False)
        elif fixes:
            by_pin = {r.pin: r for r in reports}
            moves = [Move(by_pin[e.pin], e.new) for f in fixes for e in f.edits]
            files = [f.file.resolve() for f in fixes]
            root = _branch_start(path, branch, files, do_commit)
            for f in fixes:
                apply_fix(f)
            if root is not None and do_commit:
                _commit(root, files, moves, web_url)
            # What is left after the rewrite decides the exit code, and is reported: the pins as they now stand.
            rescan = scan_path(path)
            skipped = rescan.skipped
            after = _reports(rescan, server, settings, acks.ids, warn=False)
            failed = _fails(after, threshold, strict)
            if table:
                click.echo("")
                click.echo("after --fix (the pins looked up again):")
                report_table(after, rescan.skipped, threshold, acks, strict, web_url, expired=False)
        elif branch:
            _echo_err(f"nothing to move: branch {branch} not created")
    if fmt == "json":
        _emit(report_json(reports, scan.skipped, failed, fail_on, acks, strict, fixed, diff, web_url, after) + "\n",
              output)
    elif not table:
        from hubwatch.cli.check_output import append_summary, render

        run = CheckedRun(tuple(after if after is not None else reports), threshold, strict, path, web_url,
                         tuple(skipped), moves=tuple(moves))
        _emit(render(fmt, run), output)
        if fmt == "github" and summary_file is not None:
            append_summary(run, summary_file)
    elif not fix:
        report_table(reports, scan.skipped, threshold, acks, strict, web_url)
    if failed:
        click.get_current_context().exit(EXIT_FAILED)


def _format(fmt: str | None, as_json: bool, output: Path | None) -> str:
    if as_json and fmt not in (None, "json"):
        raise click.UsageError(f"--json is --format json; it does not go with --format {fmt}")
    chosen = "json" if as_json else (fmt or "table")
    if output is not None and chosen == "table":
        raise click.UsageError("--output writes a report format: add --format json|sarif|github|junit|markdown")
    return chosen


def _check_fix_options(fix: bool, dry_run: bool, branch: str | None, do_commit: bool) -> None:
    if dry_run and not fix:
        raise click.UsageError("--dry-run goes with --fix: `hubwatch check --fix --dry-run`")
    if branch is not None and (not fix or dry_run):
        raise click.UsageError("--branch goes with --fix (and writes, so not with --dry-run): "
                               "`hubwatch check --fix --branch NAME`")
    if do_commit and branch is None:
        raise click.UsageError("--commit goes with --fix --branch: `hubwatch check --fix --branch NAME --commit`")


def _branch_start(path: Path, branch: str | None, files: list[Path], do_commit: bool) -> Path | None:
    """With --branch: the new branch made in the scanned folder's work tree (its root), else None."""
    if branch is None:
        return None
    from hubwatch.pincheck.git_branch import prepare_branch, work_tree

    root = work_tree(path.resolve())
    prepare_branch(root, branch, files, do_commit)
    _echo_err(f"on a new branch {branch} in {root}")
    return root


def _commit(root: Path, files: list[Path], moves: list[Move], web_url: str | None) -> None:
    from hubwatch.pincheck.git_branch import commit_files, commit_message

    sha = commit_files(root, files, commit_message(moves, web_url))
    _echo_err(f"committed {sha[:12]}: {len(moves)} pin{'s' if len(moves) != 1 else ''} moved")


def _echo_err(text: str, nl: bool = True) -> None:
    click.echo(text, nl=nl, err=True)


def _emit(text: str, output: Path | None) -> None:
    from hubwatch.cli.check_output import emit

    emit(text, output)


def _fails(reports: list[PinReport], threshold: Severity, strict: bool) -> bool:
    from hubwatch.pincheck.pincheck import fails

    return fails(reports, threshold, strict)
