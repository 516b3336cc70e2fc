"""The jinja2 environment of the HTML pages: autoescape on, control characters stripped, filters."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup, escape

from hubwatch.feeds.builders.badges import advisory_severity
from hubwatch.feeds.builders.diffview import DiffLine, diff_lines
from hubwatch.feeds.builders.fidelity import by_importance, plural, reader_detail, row_changes
from hubwatch.feeds.builders.richtext import render_markdown
from hubwatch.feeds.text import as_utc, fmt_amount, fmt_bytes, fmt_count, page_path, rfc3339, short_sha, xml_safe
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, Severity
from hubwatch.domain.urls import is_safe_url

__all__ = ["TEMPLATES", "make_templates"]

TEMPLATES = Path(__file__).parent / "templates"
_INLINE_MAX = 80  # characters of an old/new value shown on one line
_MAX_SHOWN = 20_000  # characters of one value shown inline; the JSON API has the rest
_DIFF_KEYS = (("diff", "Unified diff"), ("unified_diff", "Unified diff"), ("text_diff", "Text diff"))
_SHOWN_KEYS = {"file", "key", "old", "new", "rendered_diff", "rendered"} | {k for k, _ in _DIFF_KEYS}


def _finalize(value: Any) -> Any:
    """Runs on every `{{ … }}` output: strips characters no HTML/XML reader should get."""
    if isinstance(value, Markup):
        return Markup(xml_safe(str(value)))
    if isinstance(value, str):
        return xml_safe(value)
    return value


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + f"\n… ({len(text) - _MAX_SHOWN} more characters)"


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        return _clip(value)
    return _clip(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _summarised(value: Any) -> str | None:
    """One line for a value the tracker summarised (too long to store inline), else None."""
    if not isinstance(value, Mapping) or value.get("summarised") is not True:
        return None
    parts = []
    if isinstance(chars := value.get("chars"), int):
        parts.append(f"{chars:,} characters")
    if isinstance(digest := value.get("sha256"), str):
        parts.append(f"sha256 {digest[:12]}…")
    return "long value (" + (", ".join(parts) or "summarised") + ")"


def _inline(value: Any) -> str | None:
    """A value as one short line of JSON (strings quoted, newlines and tabs escaped, so that type
    and whitespace show), or None when it is too long for a line (shown as a block)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return None
    return text if len(text) <= _INLINE_MAX else None


def _when(value: datetime | None) -> str:
    return as_utc(value).strftime("%Y-%m-%d %H:%M UTC") if value is not None else "never"


def _difflines(text: str) -> list[DiffLine]:
    return diff_lines(_clip(text))


def _shown(value: str) -> str:
    """One value as `{{ value }}` writes it: finalised (`xml_safe`), then escaped."""
    return str(escape(xml_safe(value)))


def _diffhtml(text: str) -> Markup:
    """The inside of a `<pre class="diff">`: a span per diff line (its kind as class, its sign, its
    segments, changed ones in `<mark>`), built in Python as one string (a diff of the compare page
    holds thousands of segments, each a template output otherwise)."""
    parts: list[str] = []
    for line in _difflines(text):
        parts.append(f'<span class="{_shown(line.kind)}"><span class="sign">{_shown(line.sign)}</span>')
        for seg in line.segments:
            if not seg.changed:
                parts.append(_shown(seg.text))
            elif seg.blank:
                parts.append(f'<mark class="ws" title="whitespace">{_shown(seg.text)}</mark>')
            else:
                parts.append(f"<mark>{_shown(seg.text)}</mark>")
        parts.append("</span>")
    return Markup("".join(parts))


def _rendered_diffs(detail: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(conversation, unified diff, outcome note) per conversation in `detail["rendered_diff"]`
    (the tracker's shape: name → {"old": "ok"|error, "new": "ok"|error, "diff"?}; a plain string
    per name is accepted too)."""
    rendered = detail.get("rendered_diff")
    if isinstance(rendered, str):
        return [("", rendered, "")]
    if not isinstance(rendered, Mapping):
        return []
    rows = []
    for name, entry in rendered.items():
        if isinstance(entry, str):
            rows.append((str(name), entry, ""))
        elif isinstance(entry, Mapping):
            raw = entry.get("diff")
            diff = raw if isinstance(raw, str) else ""
            old, new = entry.get("old"), entry.get("new")
            note = "" if old == new == "ok" else f"old: {old} → new: {new}"
            rows.append((str(name), diff, note))
    return rows


def _rendered_prompts(detail: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(conversation, rendered prompt) for a template that appeared (`detail["rendered"]`)."""
    rendered = detail.get("rendered")
    if not isinstance(rendered, Mapping):
        return []
    return [(str(name), text) for name, text in rendered.items() if isinstance(text, str)]


def _text_diffs(detail: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(title, text) for key, title in _DIFF_KEYS if isinstance(text := detail.get(key), str) and text]


def _extra_detail(detail: Mapping[str, Any]) -> dict[str, Any]:
    """What "More detail" holds: nothing shown above and no metadata (empty: no expander)."""
    return reader_detail(detail, frozenset(_SHOWN_KEYS)) if isinstance(detail, Mapping) else {}


def _worst(changes: Sequence[ChangeRecord]) -> ChangeRecord | None:
    """The change to show first (`by_importance`: a custom-code hazard before a template update)."""
    return by_importance(changes)[0] if changes else None


def _advisory_lines(advisories: Sequence[AdvisoryRecord]) -> list[tuple[AdvisoryRecord, Severity | None, str]]:
    """(advisory, severity, summary without the repeated `org/name: ` prefix), most severe first."""
    rows = []
    for advisory in advisories:
        summary = advisory.osv.get("summary") if isinstance(advisory.osv, Mapping) else None
        text = summary if isinstance(summary, str) else ""
        prefix = f"{advisory.repo}: "
        rows.append((advisory, advisory_severity(advisory), text[len(prefix):] if text.startswith(prefix) else text))
    return sorted(rows, key=lambda row: -(row[1].rank if row[1] is not None else -1))


def make_templates(public_url: str) -> Jinja2Templates:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        count=fmt_count,
        bytes=fmt_bytes,
        when=_when,
        rfc3339=rfc3339,
        short=short_sha,
        pretty=_pretty,
        summarised=_summarised,
        inline=_inline,
        difflines=_difflines,
        diffhtml=_diffhtml,
        rendered_diffs=_rendered_diffs,
        rendered_prompts=_rendered_prompts,
        text_diffs=_text_diffs,
        extra_detail=_extra_detail,
        worst=_worst,
        by_importance=by_importance,
        row_changes=row_changes,
        plural=plural,
        safe_url=is_safe_url,
        advisory_lines=_advisory_lines,
        markdown=render_markdown,
        page=page_path,
        grouped="{:,}".format,
        amount=fmt_amount,
    )
    env.globals.update(base_path=urlsplit(public_url).path.rstrip("/"), public_url=public_url.rstrip("/"))
    return Jinja2Templates(env=env)
