"""How `hubwatch check` prints: the JSON report, the per-pin text report, and what `--fix` changed."""

from __future__ import annotations

import json
from typing import Any, Sequence

from hubwatch.cli.advisories import styled
from hubwatch.cli.console import err_console, escape, out_console
from hubwatch.domain.records import Severity
from hubwatch.pincheck.fix import FileFix
from hubwatch.pincheck.formats import compare_link
from hubwatch.pincheck.ignore import Acknowledgements
from hubwatch.pincheck.pins import Pin
from hubwatch.pincheck.report import PinReport, gate, worst_first

__all__ = ["compare_url", "pin_rows", "print_expired", "print_fixes", "report_json", "report_table"]

_STATUS_STYLE = {"affected": "red", "clean": "green", "unknown": "yellow", "unpinned": "yellow"}


def compare_url(web_url: str | None, report: PinReport) -> str | None:
    """The web app's compare page from the pin to its suggested commit (the page's URL shape,
    `/models/ORG/NAME/compare/BASE...HEAD`), when a web app is known and there is a suggestion."""
    return compare_link(web_url, report)


def pin_rows(reports: Sequence[PinReport], threshold: Severity, strict: bool,
             web_url: str | None = None) -> list[dict[str, Any]]:
    """Each pin's JSON: where, what, its status and advisories, the move, and the gate's verdict."""
    rows = []
    for r in reports:
        suggested = r.suggestion.to_json() if r.suggestion else None
        if suggested is not None and (url := compare_url(web_url, r)):
            suggested["compare_url"] = url
        verdict = gate(r, threshold, strict)
        rows.append({
            "path": r.pin.path, "line": r.pin.line, "cell": r.pin.cell, "repo": r.pin.name,
            "revision": r.pin.revision, "style": r.pin.style, "status": r.status, "commit": r.commit,
            "note": r.note, "on_main_line": r.on_main_line, "advisories": [h.to_json() for h in r.hits],
            "suggested": suggested, "fails_gate": verdict.fails, "gate_reason": verdict.reason,
        })
    return rows


def report_json(reports: Sequence[PinReport], skipped: Sequence[tuple[str, str]], failed: bool, fail_on: str,
                acks: Acknowledgements, strict: bool, fixed: Sequence[dict[str, Any]] | None = None,
                diff: str | None = None, web_url: str | None = None,
                after_fix: Sequence[PinReport] | None = None) -> str:
    """The JSON report; `after_fix`: the pins looked up again after `--fix` wrote (`failed` is theirs)."""
    threshold = Severity(fail_on)
    body: dict[str, Any] = {
        "pins": pin_rows(reports, threshold, strict, web_url), "skipped": [{"path": p, "why": w} for p, w in skipped],
        "fail_on": fail_on, "strict": strict, "failed": failed,
        "acknowledgements": {"active": [e.to_json() for e in acks.active],
                             "expired": [e.to_json() for e in acks.expired]},
    }
    if fixed is not None:
        body["fixed"] = list(fixed)
    if after_fix is not None:
        body["after_fix"] = {"pins": pin_rows(after_fix, threshold, strict, web_url)}
    if diff is not None:
        body["diff"] = diff  # --fix --dry-run: the unified diff of what --fix would write
    return json.dumps(body, indent=2, ensure_ascii=False)


def _print_suggestion(report: PinReport, web_url: str | None) -> None:
    out = out_console()
    s = report.suggestion
    if s is None:
        return
    resolves = f" (resolves {', '.join(s.resolves)})" if s.resolves else ""
    out.print(f"    [green]move to[/green] {escape(s.commit)}{escape(resolves)}", soft_wrap=True)
    if url := compare_url(web_url, report):
        out.print(f"      compare: {escape(url)}", soft_wrap=True, highlight=False)
    for change in s.changes:
        severity = change.severity.value if change.severity else "?"
        out.print(f"      on the way: {styled(severity)} {escape(change.id)}  {escape(change.summary)}", soft_wrap=True)
        for diff in change.chat_template:
            out.print(f"        [dim]{escape(diff.conversation)}: {escape(diff.old)} → {escape(diff.new)}[/dim]",
                      soft_wrap=True)
            for line in diff.diff.splitlines():
                out.print(f"        [dim]{escape(line)}[/dim]", soft_wrap=True, highlight=False)


def report_table(reports: Sequence[PinReport], skipped: Sequence[tuple[str, str]], threshold: Severity,
                 acks: Acknowledgements, strict: bool, web_url: str | None = None, expired: bool = True) -> None:
    """The per-pin report, each pin's gate verdict, and the pins failing it; `web_url`: a hubwatch web
    app whose compare page each suggestion links; `expired`: warn of expired acknowledgements."""
    out = out_console()
    if not reports:
        out.print("no model pins found")
    reasons = {e.id: e.reason for e in acks.active}
    # One block per pin: where, pin and status on one line, then one line per advisory, so that
    # ids stay whole (people copy them) on any terminal width.
    width = max((len(h.id) for r in reports for h in r.hits), default=0)
    for r in reports:
        style = _STATUS_STYLE[r.status]
        revision = (r.pin.revision or "")[:12] if r.pin.kind == "commit" else (r.pin.revision or "—")
        out.print(
            f"[bold]{escape(r.pin.where)}[/bold]  {escape(f'{r.pin.name}@{revision}')}  [{style}]{r.status}[/{style}]",
            soft_wrap=True,
        )
        for h in worst_first(r.hits):
            severity = h.severity.value if h.severity else "?"
            kinds = escape(", ".join(h.kinds)) if h.kinds else ""
            extra = f"  [dim]{escape(h.direction)}[/dim]" if h.direction else ""
            if h.ignored:
                why = reasons.get(h.id) or "--ignore"
                extra += f"  [dim](ignored: {escape(why)})[/dim]"
            out.print(f"    {styled(severity)}{' ' * (9 - len(severity))}{escape(h.id.ljust(width))}  {kinds}{extra}",
                      soft_wrap=True)
            if h.upstream_fix and r.suggestion is None:
                out.print(f"      [yellow]{escape(h.upstream_fix)}[/yellow]", soft_wrap=True)
        _print_suggestion(r, web_url)
        if r.note:
            out.print(f"    [dim]{escape(r.note)}[/dim]", soft_wrap=True)
        verdict = gate(r, threshold, strict)
        if verdict.fails:
            out.print(f"    [bold red]{escape(verdict.text())}[/bold red]", soft_wrap=True, highlight=False)
        else:
            out.print(f"    [dim]{escape(verdict.text())}[/dim]", soft_wrap=True, highlight=False)
    for path, why in skipped:
        out.print(f"[yellow]warning:[/yellow] {escape(path)}: {escape(why)}")
    if expired:
        print_expired(acks)
    counts = {s: sum(1 for r in reports if r.status == s) for s in ("affected", "clean", "unknown", "unpinned")}
    mode = "; unknown or dropped fails (--strict)" if strict else ""
    out.print(", ".join(f"{n} {s}" for s, n in counts.items()) + f" (failing at {threshold.value} or above{mode})")
    failing = [r for r in reports if gate(r, threshold, strict).fails]
    if failing:
        names = ", ".join(f"{r.pin.where} {r.pin.name}@{(r.pin.revision or '')[:12]}" for r in failing)
        out.print(f"[bold red]{len(failing)} failing the gate:[/bold red] {escape(names)}", soft_wrap=True,
                  highlight=False)
    else:
        out.print("no pin fails the gate")


def print_expired(acks: Acknowledgements) -> None:
    for e in acks.expired:
        until = e.until.isoformat() if e.until else "?"
        out_console().print(f"[yellow]warning:[/yellow] {escape(f'{e.source}: the ignore entry for {e.id} expired on {until}; it no longer applies (extend until, or remove it)')}",
                            soft_wrap=True)


def print_fixes(fixes: Sequence[FileFix], left: Sequence[tuple[Pin, str]], dry_run: bool,
                to_stderr: bool = False) -> None:
    """What --fix changed (or would), one line a pin; on stderr when stdout carries a report format."""
    out = err_console() if to_stderr else out_console()
    verb = "would change" if dry_run else "changed"
    for fix in fixes:
        for edit in fix.edits:
            out.print(escape(f"{verb} {edit.pin.where}: {edit.pin.repo}@{edit.old} → {edit.new}"), soft_wrap=True,
                      highlight=False)
    for pin, why in left:
        out.print(f"[yellow]left alone:[/yellow] {escape(f'{pin.where}: {pin.repo}@{pin.revision}: {why}')}",
                  soft_wrap=True)
    if not fixes and not left:
        out.print("nothing to fix: no affected or dropped pin has a revision to move to")
