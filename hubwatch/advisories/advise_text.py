"""The human text of an advisory: its one-line summary and its Markdown details."""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from hubwatch.domain.records import RepoId

__all__ = ["clean_line", "render_details", "render_summary"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_SUMMARY_MAX = 200


def clean_line(text: object, limit: int = 300) -> str:
    """Upstream text made safe for one Markdown line: no control characters or line breaks."""
    line = _CONTROL.sub("", " ".join(str(text).split()))
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _code(text: object) -> str:
    body = clean_line(text, 200).replace("`", "'")
    return f"`{body}`"


def render_summary(repo: RepoId, direction: str, items: Sequence[Mapping[str, Any]]) -> str:
    """`org/name: <kind>/<severity>: <summary> (+N more)`, at most 200 characters.

    It says what changed, the same for both meanings: how a record relates to a given revision
    (lacks it, carries it) is worked out by whoever shows it for that revision, never written here.
    """
    top = items[0]
    more = f" (+{len(items) - 1} more)" if len(items) > 1 else ""
    text = f"{repo}: {top['kind']}/{top['severity']}: {clean_line(top['summary'], 160)}"
    if len(text) + len(more) > _SUMMARY_MAX:
        text = text[: _SUMMARY_MAX - len(more) - 1] + "…"
    return text + more


def _delta_lines(delta: Mapping[str, Any]) -> list[str]:
    lines = []
    for name in sorted(delta):
        value = delta[name]
        if isinstance(value, Mapping) and "old" in value and "new" in value:
            lines.append(f"{clean_line(name, 80)}: {clean_line(value['old'], 60)} → {clean_line(value['new'], 60)}")
        else:
            lines.append(f"{clean_line(name, 80)}: {clean_line(value, 120)}")
    return lines


def _undone_line(ds: Mapping[str, Any]) -> str:
    """What upstream undid of an update: all of it, or which part (the rest stands)."""
    sha = str(ds["reverted_by"])[:12]
    undoable = [c for c in ds.get("changes", []) if c.get("path") != "estimate"]
    undone = [c for c in undoable if c.get("undone_in")]
    if not undone or len(undone) == len(undoable):  # records written before per-change marks: all
        return f"Upstream undid this update in `{sha}`; see the related advisory."
    standing = [c for c in undoable if not c.get("undone_in")]
    rest = ", ".join(f"{c['severity']} {_code(c['path'])}" for c in standing)
    return (
        f"Upstream undid part of this update in `{sha}` ({len(undone)} of {len(undoable)} changes); "
        f"the rest stands: {rest}. See the related advisory."
    )


def render_details(repo: RepoId, ds: Mapping[str, Any], repo_url: str, web_url: str) -> str:
    """Markdown a person reads: the commit, each change with severity, estimate deltas, status."""
    sha = str(ds["commit"])
    title = clean_line(ds.get("commit_title") or "", 120)
    commit_link = f"[`{sha[:12]}`]({repo_url}/commit/{sha})"
    said = " carries, from the first revision hubwatch stored:" if ds.get("baseline") else " changed:"
    lines = [f"Upstream commit {commit_link} of **{repo}**" + (f" (“{title}”)" if title else "") + said, ""]
    for item in ds.get("changes", []):
        line = f"- **{item['severity']}** {_code(item['kind'])} {_code(item['path'])}: {clean_line(item['summary'])}"
        if item.get("reverted_by"):
            line += f" — removed upstream in `{str(item['reverted_by'])[:12]}`"
        if item.get("undone_in"):
            line += f" — undone upstream in `{str(item['undone_in'])[:12]}`"
        if item.get("reverts"):
            line += f" — undoes the update of {_code(item['reverts'])}"
        lines.append(line)
        delta = item.get("detail", {}).get("estimate_delta")
        if isinstance(delta, Mapping):
            lines.extend(f"  - estimate {text}" for text in _delta_lines(delta))
    lines.append("")
    if ds.get("direction") in ("update", "fix"):  # "fix": written before the rename
        lines.append(f"**Update.** Revisions before `{sha[:12]}` lack this change; from `{sha[:12]}` on have it.")
    elif ds.get("fixed_by"):
        fixed = str(ds["fixed_by"])[:12]
        lines.append(f"**Hazard.** Revisions from `{sha[:12]}` up to, not including, `{fixed}` carry it (`{fixed}` removed it).")
    else:
        lines.append(f"**Hazard.** Revision `{sha[:12]}` and every later revision carry it, until upstream removes it.")
    if ds.get("reverted_by"):
        lines.append(_undone_line(ds))
    lines += ["", f"Diff: {web_url}{repo.page_path}/revisions/{sha}"]
    return "\n".join(lines)
