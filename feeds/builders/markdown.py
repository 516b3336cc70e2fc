"""The Markdown twin of a model page: the same history as plain, portable Markdown.

Remote text is escaped so it cannot inject HTML or Markdown structure (links, headings, tables).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hubwatch.feeds.builders.fidelity import by_importance
from hubwatch.feeds.builders.views import HistoryEntryLike, estimate_view, stored_estimate
from hubwatch.feeds.text import fmt_bytes, fmt_count, page_path, rfc3339, short_sha, xml_safe
from hubwatch.domain.records import RepoId

__all__ = ["md_escape", "model_markdown"]

_SPECIAL = re.compile(r"([\\`*_\[\]#|~])")


def md_escape(text: str) -> str:
    """`text` as literal Markdown inline text: HTML entities for <, >, &; specials backslashed;
    newlines folded to spaces."""
    text = xml_safe(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = " ".join(text.split())
    return _SPECIAL.sub(r"\\\1", text)


def _estimate_line(entry: HistoryEntryLike) -> str | None:
    view = estimate_view(stored_estimate(entry))
    if view is None:
        return None
    if view.error:
        return f"- Estimate: not available ({md_escape(view.error)})"
    support = f" ({md_escape(view.support.text)})" if view.support else ""
    bits = [f"params {fmt_count(view.params)}{support}"]
    bits += [f"{md_escape(method)} {fmt_bytes(total)}" for method, total in view.memory]
    return "- Estimate: " + ", ".join(bits)


def _cards_table(entry: HistoryEntryLike) -> list[str]:
    """Largest batch per card and method at `entry` (a Markdown table), or nothing."""
    view = estimate_view(stored_estimate(entry))
    if view is None or not view.cards:
        return []
    labels = [label for label, _ in view.cards[0].batches]
    lines = [
        f"Largest batch per card at {short_sha(entry.revision.sha)} (0 = does not fit):",
        "",
        "| card | " + " | ".join(md_escape(label) for label in labels) + " |",
        "|---" * (len(labels) + 1) + "|",
    ]
    for card in view.cards:
        cells = ["—" if n is None else str(n) for _, n in card.batches]
        lines.append(f"| {md_escape(card.name)} | " + " | ".join(cells) + " |")
    if view.misfits:  # the stored settings' method on each card it does not fit, naming the term
        lines += ["", *(f"- {md_escape(f'{v.method} at batch {v.batch} {v.line}')}" for v in view.misfits)]
    return lines


def model_markdown(
    repo: RepoId, entries: Sequence[HistoryEntryLike], base_url: str, hub_url: str,
    verdict: tuple[str, str | None] | None = None, total: int | None = None, older: str | None = None,
) -> str:  # fmt: skip
    """The model's history (or one page of it), newest revision first; `verdict`: the latest
    revision's standing as (headline, suggested sha), said as the model page says it; `total`: the
    count of stored revisions (default: the entries given); `older`: the URL of the older page."""
    page = f"{base_url}{page_path(repo)}"
    count = len(entries) if total is None else total
    lines = [
        f"# {md_escape(str(repo))}",
        "",
        f"Upstream: <{repo.url(hub_url)}> · Page: <{page}> · Feed: <{page}/feed.atom>",
        "",
        f"{count} revision{'s' if count != 1 else ''} tracked.",
    ]
    if verdict is not None:
        headline, move = verdict
        target = f" — move to [{short_sha(move)}]({page}/revisions/{move})" if move else ""
        lines += ["", f"{md_escape(headline[:1].upper() + headline[1:])}{target}."]
    newest = max(entries, key=lambda e: e.position, default=None)
    if newest is not None and (table := _cards_table(newest)):
        lines += ["", *table]
    for entry in sorted(entries, key=lambda e: e.position, reverse=True):
        revision = entry.revision
        lines += [
            "",
            f"## {short_sha(revision.sha)} · {rfc3339(revision.date)}",
            "",
            f"{md_escape(revision.title) or '(no message)'} ([diff]({page}/revisions/{revision.sha}))",
            "",
        ]
        if entry.changes:
            for change in by_importance(entry.changes):  # the most important first, as on the pages
                lines.append(
                    f"- **{change.kind.value}/{change.severity.value}** `{change.path.replace('`', chr(39))}`: "
                    f"{md_escape(change.summary)}"
                )
        else:
            lines.append("- No tracked change.")
        estimate = _estimate_line(entry)
        if estimate:
            lines.append(estimate)
        if entry.advisory_ids:
            links = ", ".join(f"[{a}]({base_url}/advisories/{a})" for a in entry.advisory_ids)
            lines.append(f"- Advisories: {links}")
    if older is not None:
        lines += ["", f"[Older revisions →]({older})"]
    return "\n".join(lines) + "\n"
