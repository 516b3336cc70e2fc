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
        if warn and not store.watched():
            err_console().print(
                "[yellow]warning:[/yellow] the local store watches no repos, so every pin is unknown: "
                "`hubwatch watch add ORG/NAME` then `hubwatch poll`, or use --server URL"
            )
        return check_pins(scan.pins, StoreSource(store), ignored)
    finally:
        store.close()


@cli.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path), default=Path("."))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
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
def check(path: Path, as_json: bool, fail_on: str, server: str | None, ignore_ids: tuple[str, ...], strict: bool,
          fix: bool, dry_run: bool) -> None:
    """Scan PATH for pinned model revisions and report the advisories that affect them.

    Unpinned uses (no revision, or main) are warnings; a pin the database does not know is
    reported as unknown, never as safe. Advisories acknowledged in .hubwatch.toml (or
    [tool.hubwatch] in pyproject.toml) or with --ignore are listed as ignored and never fail.
    Each affected pin, and each pin whose commit a force-push upstream dropped, gets the revision to
    move to; --fix writes it, then reports the pins as they stand after the rewrite. Each pin says
    whether it fails the gate and why. Exit 1 when an advisory not ignored, at or above --fail-on,
    affects a pin (and, with --strict, when a pin is unknown or on a dropped commit); exit 3 when
    --server is not a hubwatch web app of an API version this one speaks.
    """
    from hubwatch.cli.check_render import print_fixes, report_json, report_table
    from hubwatch.pincheck.fix import apply_fix, plan_fixes, unified_diff
    from hubwatch.pincheck.ignore import load_acknowledgements
    from hubwatch.pincheck.pins import scan_path
    from hubwatch.settings import load_settings

    if dry_run and not fix:
        raise click.UsageError("--dry-run goes with --fix: `hubwatch check --fix --dry-run`")
    if server and not server.startswith(("http://", "https://")):
        raise click.BadParameter(f"{server!r} is not an http(s) URL", param_hint="--server")
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
    if fix:
        targets = [(r.pin, r.suggestion.commit) for r in reports if r.moves and r.suggestion]
        fixes, left = plan_fixes(path, targets, scan.pins)
        fixed = [{"path": e.pin.path, "line": e.pin.line, "cell": e.pin.cell, "repo": str(e.pin.repo),
                  "old": e.old, "new": e.new, "written": not dry_run} for f in fixes for e in f.edits]
        fixed += [{"path": p.path, "line": p.line, "cell": p.cell, "repo": str(p.repo), "old": p.revision,
                   "new": None, "written": False, "why": why} for p, why in left]
        if not as_json:
            report_table(reports, scan.skipped, threshold, acks, strict, web_url)
            print_fixes(fixes, left, dry_run)
        if dry_run:
            diff = "".join(unified_diff(f) for f in fixes)
            if not as_json:
                click.echo(diff, nl=False)
        elif fixes:
            for f in fixes:
                apply_fix(f)
            # What is left after the rewrite decides the exit code, and is reported: the pins as they now stand.
            rescan = scan_path(path)
            after = _reports(rescan, server, settings, acks.ids, warn=False)
            failed = _fails(after, threshold, strict)
            if not as_json:
                click.echo("")
                click.echo("after --fix (the pins looked up again):")
                report_table(after, rescan.skipped, threshold, acks, strict, web_url, expired=False)
    if as_json:
        click.echo(report_json(reports, scan.skipped, failed, fail_on, acks, strict, fixed, diff, web_url, after))
    elif not fix:
        report_table(reports, scan.skipped, threshold, acks, strict, web_url)
    if failed:
        click.get_current_context().exit(EXIT_FAILED)


def _fails(reports: list[PinReport], threshold: Severity, strict: bool) -> bool:
    from hubwatch.pincheck.pincheck import fails

    return fails(reports, threshold, strict)
