"""`hubwatch advisories`, `hubwatch export osv PATH` and `hubwatch check [PATH]`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import click

from hubwatch.cli import cli
from hubwatch.cli.console import err_console, escape, out_console
from hubwatch.cli.errors import EXIT_FAILED
from hubwatch.cli.params import REPO_ID
from hubwatch.domain.records import AdvisoryRecord, RepoId, Severity

__all__ = ["advisories", "check", "export"]

_SEVERITY_STYLE = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan", "info": "dim"}
_STATUS_STYLE = {"affected": "red", "clean": "green", "unknown": "yellow", "unpinned": "yellow"}


def _styled(severity: str | None) -> str:
    text = severity or "?"
    style = _SEVERITY_STYLE.get(text, "magenta")
    return f"[{style}]{escape(text)}[/{style}]"


def _range_text(record: AdvisoryRecord) -> str:
    parts = []
    for affected in record.osv.get("affected") or []:
        for rng in affected.get("ranges") or []:
            intro = next((e["introduced"] for e in rng.get("events", []) if "introduced" in e), "0")
            fixed = next((e["fixed"] for e in rng.get("events", []) if "fixed" in e), None)
            start = "start" if intro == "0" else intro[:10]
            parts.append(f"{start} → {fixed[:10] if fixed else 'now'}")
    return ", ".join(parts)


@cli.command()
@click.option("--repo", type=REPO_ID, default=None, help="Only the advisories of this ORG/NAME.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of OSV records.")
def advisories(repo: RepoId | None, as_json: bool) -> None:
    """List the OSV advisories hubwatch has published (all repos, or one)."""
    from rich.table import Table

    from hubwatch.advisories.osv_export import published_osv
    from hubwatch.settings import load_settings
    from hubwatch.wiring import open_store

    store = open_store(load_settings())
    try:
        records = store.advisories(repo)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps([published_osv(r) for r in records], indent=2, ensure_ascii=False))
        return
    if not records:
        out_console().print(escape("no advisories" + (f" for {repo}" if repo else "") + " yet (`hubwatch poll` first)"))
        return
    table = Table(title=escape("advisories" + (f" for {repo}" if repo else "")))
    table.add_column("id / affected commits", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("summary", overflow="fold")
    for record in records:
        ds = record.osv.get("database_specific") or {}
        summary = escape(record.osv.get("summary", ""))
        if record.withdrawn is not None:
            summary = f"[dim](withdrawn)[/dim] {summary}"
        ident = f"{escape(record.id)}\n[dim]{escape(_range_text(record))}[/dim]"
        table.add_row(ident, _styled(ds.get("max_severity")), summary)
    out_console().print(table)


@cli.group()
def export() -> None:
    """Export what hubwatch has published, as files."""


@export.command("osv")
@click.argument("path", type=click.Path(file_okay=False, path_type=Path))
def export_osv(path: Path) -> None:
    """Write every advisory to PATH laid out like OSV's data dumps (all.zip, GIT/, modified_id.csv)."""
    from hubwatch.advisories.osv_export import export_files, write_export
    from hubwatch.settings import load_settings
    from hubwatch.wiring import open_store

    store = open_store(load_settings())
    try:
        records = store.advisories()
    finally:
        store.close()
    files = export_files(records)
    try:
        write_export(files, path)
    except OSError as exc:
        raise click.UsageError(f"cannot write the export to {path}: {exc}") from exc
    out_console().print(
        escape(f"wrote {len(records)} advisories to {path} (all.zip, GIT/all.zip, GIT/<id>.json, modified_id.csv)")
    )


def _report_json(reports: Sequence[Any], skipped: Sequence[tuple[str, str]], failed: bool, fail_on: str) -> str:
    rows = []
    for r in reports:
        rows.append(
            {
                "path": r.pin.path,
                "line": r.pin.line,
                "cell": r.pin.cell,
                "repo": str(r.pin.repo),
                "revision": r.pin.revision,
                "style": r.pin.style,
                "status": r.status,
                "commit": r.commit,
                "note": r.note,
                "advisories": [
                    {"id": h.id, "severity": h.severity.value if h.severity else None, "summary": h.summary,
                     "modified": h.modified, "kinds": list(h.kinds)}
                    for h in r.hits
                ],
            }
        )
    body = {"pins": rows, "skipped": [{"path": p, "why": w} for p, w in skipped], "fail_on": fail_on, "failed": failed}
    return json.dumps(body, indent=2, ensure_ascii=False)


def _report_table(reports: Sequence[Any], skipped: Sequence[tuple[str, str]], threshold: Severity) -> None:
    out = out_console()
    if not reports:
        out.print("no model pins found")
    # One block per pin: where, pin and status on one line, then one line per advisory, so that
    # ids stay whole (people copy them) on any terminal width.
    width = max((len(h.id) for r in reports for h in r.hits), default=0)
    for r in reports:
        style = _STATUS_STYLE[r.status]
        revision = (r.pin.revision or "")[:12] if r.pin.kind == "commit" else (r.pin.revision or "—")
        out.print(
            f"[bold]{escape(r.pin.where)}[/bold]  {escape(f'{r.pin.repo}@{revision}')}  [{style}]{r.status}[/{style}]",
            soft_wrap=True,
        )
        for h in sorted(r.hits, key=lambda h: (-(h.severity.rank if h.severity else -1), h.id)):  # worst first
            severity = h.severity.value if h.severity else "?"
            kinds = escape(", ".join(h.kinds)) if h.kinds else ""
            out.print(f"    {_styled(severity)}{' ' * (9 - len(severity))}{escape(h.id.ljust(width))}  {kinds}",
                      soft_wrap=True)
        if r.note:
            out.print(f"    [dim]{escape(r.note)}[/dim]", soft_wrap=True)
    for path, why in skipped:
        out.print(f"[yellow]warning:[/yellow] {escape(path)}: {escape(why)}")
    counts = {s: sum(1 for r in reports if r.status == s) for s in ("affected", "clean", "unknown", "unpinned")}
    out.print(", ".join(f"{n} {s}" for s, n in counts.items()) + f" (failing at {threshold.value} or above)")


@cli.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path), default=Path("."))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--fail-on",
    type=click.Choice([s.value for s in Severity]),
    default="high",
    show_default=True,
    help="Exit 1 when an advisory at or above this severity affects a pin.",
)
@click.option("--server", default=None, metavar="URL", help="Ask a hubwatch web app instead of the local store.")
def check(path: Path, as_json: bool, fail_on: str, server: str | None) -> None:
    """Scan PATH for pinned model revisions and report the advisories that affect them.

    Unpinned uses (no revision, or main) are warnings; a pin the database does not know is
    reported as unknown, never as safe. Exit 1 when an advisory at or above --fail-on affects a pin.
    """
    import httpx

    from hubwatch.pincheck.pincheck import ServerSource, StoreSource, check_pins, fails
    from hubwatch.pincheck.pins import scan_path
    from hubwatch.settings import load_settings
    from hubwatch.wiring import open_store

    settings = load_settings()
    scan = scan_path(path)
    threshold = Severity(fail_on)
    if server:
        if not server.startswith(("http://", "https://")):
            raise click.BadParameter(f"{server!r} is not an http(s) URL", param_hint="--server")
        with httpx.Client(base_url=server.rstrip("/"), timeout=settings.hub_timeout_s) as client:
            # A server that does not answer raises ServerUnreachable: exit 3 with a fix (cli/errors.py).
            reports = check_pins(scan.pins, ServerSource(client))
    else:
        store = open_store(settings)
        try:
            if not store.watched():
                err_console().print(
                    "[yellow]warning:[/yellow] the local store watches no repos, so every pin is unknown: "
                    "`hubwatch watch add ORG/NAME` then `hubwatch poll`, or use --server URL"
                )
            reports = check_pins(scan.pins, StoreSource(store))
        finally:
            store.close()
    failed = fails(reports, threshold)
    if as_json:
        click.echo(_report_json(reports, scan.skipped, failed, fail_on))
    else:
        _report_table(reports, scan.skipped, threshold)
    if failed:
        click.get_current_context().exit(EXIT_FAILED)
