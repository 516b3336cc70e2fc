"""`hubwatch check --format markdown`: the report as a pull-request comment (or a job summary) shows it.

A headline with the verdict, a table of the pins that need a look (failing first), each pin's
advisories with links to their pages and the revision to move to with its compare link, and, after
`--fix`, the pins it moved. Every text that came from an advisory record or a file name is escaped
(formats.md_text), so a summary cannot add a link, an image, HTML, a mention or a table cell.
"""

from __future__ import annotations

from hubwatch.pincheck.formats import CheckedRun, Move, advisory_url, compare_link, md_code, md_text, pin_label
from hubwatch.pincheck.report import PinReport, worst_first

__all__ = ["moves_markdown", "to_markdown"]


def _advisory(run: CheckedRun, advisory_id: str) -> str:
    url = advisory_url(run.web_url, advisory_id)
    return f"[{md_text(advisory_id)}](<{url}>)" if url else md_text(advisory_id)


def _pin_block(run: CheckedRun, report: PinReport) -> list[str]:
    verdict = run.verdict(report)
    mark = "❌" if verdict.fails else "⚠️"
    out = [f"#### {mark} {md_code(report.pin.where)} {md_code(pin_label(report.pin))} — {report.status}", "",
           f"{'**FAILS**' if verdict.fails else 'passes the gate'}: {md_text(verdict.reason)}", ""]
    for h in worst_first(report.hits):
        severity = h.severity.value if h.severity else "unknown severity"
        tail = " *(acknowledged)*" if h.ignored else ""
        kinds = f" ({md_text(', '.join(h.kinds))})" if h.kinds else ""
        out.append(f"- **{severity}** {h.direction or 'advisory'} {_advisory(run, h.id)}{kinds}: "
                   f"{md_text(h.summary)}{tail}")
    s = report.suggestion
    if s is not None:
        resolves = f" (resolves {', '.join(_advisory(run, i) for i in s.resolves)})" if s.resolves else ""
        link = compare_link(run.web_url, report)
        out += ["", f"Move to {md_code(s.commit)}{resolves}" + (f" — [compare](<{link}>)" if link else "")]
    if report.note:
        out += ["", f"*{md_text(report.note)}*"]
    return [*(line for k, line in enumerate(out) if line or (k and out[k - 1])), ""]


def moves_markdown(run: CheckedRun, moves: tuple[Move, ...]) -> list[str]:
    """The pins `--fix` moved: where, from and to, what moving resolves and the compare page (table cells
    hold escaped text only: a `|` in a code span would still end a cell)."""
    if not moves:
        return []
    out = ["### Pins moved", "", "| pin | from | to | resolves | compare |", "|---|---|---|---|---|"]
    for m in moves:
        r = m.report
        link = compare_link(run.web_url, r)
        out.append(f"| {md_text(r.pin.where)} {md_text(r.pin.name)} | {md_text((r.pin.revision or '')[:12])} "
                   f"| {md_text(m.new[:12])} | {', '.join(_advisory(run, i) for i in m.resolves) or '—'} "
                   f"| {f'[compare](<{link}>)' if link else '—'} |")
    return [*out, ""]


def to_markdown(run: CheckedRun) -> str:
    failing = run.failing
    counts = {s: sum(1 for r in run.reports if r.status == s) for s in ("affected", "clean", "unknown", "unpinned")}
    head = (f"## hubwatch: ❌ {len(failing)} {'pin fails' if len(failing) == 1 else 'pins fail'} the gate"
            if failing else "## hubwatch: ✅ no pin fails the gate")
    mode = "; unknown or dropped pins fail (`--strict`)" if run.strict else ""
    out = [head, "", ", ".join(f"{n} {s}" for s, n in counts.items())
           + f" — failing at **{run.threshold.value}** or above{mode}.", ""]
    out += moves_markdown(run, run.moves)
    look = [r for r in run.reports if r.status != "clean" or r.on_main_line is False or run.verdict(r).fails]
    look.sort(key=lambda r: not run.verdict(r).fails)  # failing first; stable, so by file and line within
    if look:
        out += ["| | pin | status | verdict |", "|---|---|---|---|"]
        for r in look:
            verdict = run.verdict(r)
            out.append(f"| {'❌' if verdict.fails else '⚠️'} | {md_text(r.pin.where)} {md_text(pin_label(r.pin))} "
                       f"| {r.status} | {md_text(verdict.reason)} |")
        out.append("")
        for r in look:
            out += _pin_block(run, r)
    elif not run.reports:
        out += ["No model pins found.", ""]
    for path, why in run.skipped:
        out.append(f"- warning: {md_code(path)}: {md_text(why)}")
    return "\n".join(out).rstrip() + "\n"
