"""`hubwatch advisories` and `hubwatch export osv PATH` (`hubwatch check` is in check.py)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from hubwatch.cli import cli
from hubwatch.cli.console import escape, out_console
from hubwatch.cli.params import REPO_ID
from hubwatch.domain.records import AdvisoryRecord, RepoId

__all__ = ["advisories", "export", "styled"]

_SEVERITY_STYLE = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan", "info": "dim"}


def styled(severity: str | None) -> str:
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
@click.option("--limit", "-n", type=click.IntRange(min=1), default=None, metavar="N",
              help="Only the N most recently published (still listed oldest first), however many there are.")
def advisories(repo: RepoId | None, as_json: bool, limit: int | None) -> None:
    """List the OSV advisories hubwatch has published (all repos, or one)."""
    from rich.table import Table

    from hubwatch.advisories.osv_export import published_osv
    from hubwatch.settings import load_settings
    from hubwatch.wiring import open_store

    store = open_store(load_settings())
    try:
        records = store.advisories.records(repo, newest=limit)
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
        table.add_row(ident, styled(ds.get("max_severity")), summary)
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
        records = store.advisories.records()
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
