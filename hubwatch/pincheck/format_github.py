"""`hubwatch check --format github`: GitHub Actions workflow commands, one per pin that needs a look.

`::error` for a pin failing the gate, `::warning` for every other pin that is affected, unknown,
unpinned or on a dropped commit (a clean pin says nothing), each on the file, line and column of the
revision. Data is escaped as the runner reads it (`%`, CR, LF), properties also `:` and `,`, so no
advisory text or file name can end a command early or start another. The Markdown summary for
`$GITHUB_STEP_SUMMARY` is the `markdown` format's report.
"""

from __future__ import annotations

from hubwatch.pincheck.formats import CheckedRun, pin_label
from hubwatch.pincheck.report import PinReport, worst_first

__all__ = ["escape_data", "escape_property", "to_github"]


def escape_data(text: str) -> str:
    """A workflow command's message, as the Actions runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (`file=`, `title=`)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(run: CheckedRun, report: PinReport) -> str | None:
    verdict = run.verdict(report)
    if verdict.fails:
        level = "error"
    elif report.status != "clean" or report.on_main_line is False:
        level = "warning"
    else:
        return None
    where = run.region(report.pin)
    props = [f"file={escape_property(run.uri(report.pin))}", f"line={where.line}"]
    if where.column is not None and where.end_column is not None:
        props += [f"endLine={where.line}", f"col={where.column}", f"endColumn={where.end_column}"]
    props.append(f"title={escape_property(f'hubwatch: {pin_label(report.pin)} {report.status}')}")
    lines = [verdict.text()]
    lines += [f"{h.severity.value if h.severity else 'unknown severity'} {h.direction or 'advisory'} {h.id}: "
              f"{h.summary}{' (acknowledged)' if h.ignored else ''}" for h in worst_first(report.hits)]
    if report.suggestion is not None:
        resolves = f" (resolves {', '.join(report.suggestion.resolves)})" if report.suggestion.resolves else ""
        lines.append(f"move to {report.suggestion.commit}{resolves}")
    if report.note:
        lines.append(report.note)
    return f"::{level} {','.join(props)}::{escape_data(chr(10).join(lines))}"


def to_github(run: CheckedRun) -> str:
    """One workflow command per pin that needs a look, then a plain count line."""
    commands = [c for r in run.reports if (c := _command(run, r)) is not None]
    failing = len(run.failing)
    tail = (f"hubwatch: {failing} of {len(run.reports)} pins fail the gate (--fail-on {run.threshold.value})"
            if failing else f"hubwatch: no pin fails the gate ({len(run.reports)} pins)")
    return "".join(f"{c}\n" for c in commands) + escape_data(tail) + "\n"
