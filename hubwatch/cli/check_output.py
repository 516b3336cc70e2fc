"""Where `hubwatch check --format sarif|github|junit|markdown` goes: stdout or `--output FILE`, and for
`github` the Markdown summary appended to the job summary file (`$GITHUB_STEP_SUMMARY`)."""

from __future__ import annotations

from pathlib import Path

import click

from hubwatch.pincheck.formats import CheckedRun

__all__ = ["append_summary", "emit", "render"]


def render(fmt: str, run: CheckedRun) -> str:
    """The report of one run in a CI format (`table` and `json` are printed by check_render)."""
    if fmt == "sarif":
        from hubwatch.pincheck.format_sarif import to_sarif

        return to_sarif(run)
    if fmt == "github":
        from hubwatch.pincheck.format_github import to_github

        return to_github(run)
    if fmt == "junit":
        from hubwatch.pincheck.format_junit import to_junit

        return to_junit(run)
    if fmt == "markdown":
        from hubwatch.pincheck.format_markdown import to_markdown

        return to_markdown(run)
    raise ValueError(f"no CI renderer for format {fmt!r}")


def emit(text: str, output: Path | None) -> None:
    """The report on stdout, or written to `output` (replaced whole, UTF-8)."""
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")


def append_summary(run: CheckedRun, summary_file: Path) -> None:
    """The `markdown` report appended to the job summary file (GitHub shows it on the run's page)."""
    from hubwatch.pincheck.format_markdown import to_markdown

    with summary_file.open("a", encoding="utf-8") as out:
        out.write(to_markdown(run) + "\n")
