"""What a message says: repo, commit title, worst severity, the top changes in words, links to the
revision page and the advisories, and the pins affected. Markdown where the target renders it,
plain text for e-mail, JSON (with the OSV records) for webhooks.

Everything in a payload came from upstream (commit titles, file names, summaries): hostile text.
It is reduced to one line without control characters, and escaped for Markdown.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from hubwatch.domain.records import InvalidRepoId, RepoId, Severity
from hubwatch.notify.targets import Outgoing

__all__ = ["advisory_url", "escape_md", "one_line", "render", "revision_url"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~])")


def one_line(value: object, limit: int = 300) -> str:
    """Remote text as one line of at most `limit` characters, control characters removed."""
    text = _CONTROL.sub(" ", str(value)).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def escape_md(value: object, limit: int = 300) -> str:
    return _MD_SPECIAL.sub(r"\\\1", one_line(value, limit))


def revision_url(public_url: str, repo: str, sha: str) -> str:
    """The revision's page: `/models/ORG/NAME/…` for a model, `/datasets/ORG/NAME/…` for a dataset
    (`repo` as the store writes it, `datasets/org/name` for a dataset)."""
    try:
        parsed = RepoId.parse(repo)
        section, org, name = ("datasets" if parsed.is_dataset else "models"), parsed.org, parsed.name
    except InvalidRepoId:  # not an id the store writes: kept as given, still escaped
        section, (org, _, name) = "models", repo.partition("/")
    return (f"{public_url.rstrip('/')}/{section}/{quote(org, safe='')}/{quote(name, safe='')}"
            f"/revisions/{quote(sha, safe='')}")


def advisory_url(public_url: str, advisory_id: str) -> str:
    return f"{public_url.rstrip('/')}/advisories/{quote(advisory_id, safe='')}"


def _advisory_line(osv: Mapping[str, Any]) -> tuple[str, str]:
    ds = osv.get("database_specific")
    severity = str(ds.get("max_severity", "")) if isinstance(ds, Mapping) else ""
    return str(osv.get("id", "")), f"{severity} · {one_line(osv.get('summary', ''))}".strip(" ·")


def _severity(payload: Mapping[str, Any]) -> Severity | None:
    """A payload's worst severity: the store hands it back as a `Severity` (or None)."""
    value = payload.get("worst_severity")
    return value if isinstance(value, Severity) else None


def _worst(payloads: Sequence[Mapping[str, Any]]) -> Severity | None:
    found = [s for s in map(_severity, payloads) if s is not None]
    return max(found, key=lambda s: s.rank) if found else None


def _section(payload: Mapping[str, Any], public_url: str, markdown: bool) -> list[str]:
    repo, sha = str(payload["repo"]), str(payload["sha"])
    link = revision_url(public_url, repo, sha)
    title = one_line(payload.get("title", ""))
    severity = _severity(payload)
    worst = severity.value if severity else "none"
    lines: list[str]
    if markdown:
        lines = [f"**{escape_md(repo)}** — [{escape_md(title) or sha[:12]}]({link}) · worst severity **{worst}**"]
    else:
        lines = [f"{repo} @ {sha[:12]}: {title}", f"Worst severity: {worst}", f"Revision: {link}"]
    # A force-push's (or a restore's) one change is its title (`storage.notify.enqueue_rewrite`,
    # `enqueue_restore`): not said twice.
    for change in [] if payload.get("rewrite") or payload.get("restore") else payload.get("changes", []):
        what = f"{change.get('severity')} · {change.get('kind')} · {one_line(change.get('path', ''), 120)}: " \
               f"{one_line(change.get('summary', ''))}"  # fmt: skip
        lines.append(f"- {escape_md(what, 500)}" if markdown else f"- {what}")
    more = int(payload.get("changes_total", 0)) - len(payload.get("changes", []))
    if more > 0:
        lines.append(f"- …and {more} more change{'s' if more != 1 else ''}")
    pins: dict[str, list[str]] = {}  # advisory id → where it affects a pin
    for pin in payload.get("pins", []):
        if pin.get("dropped"):  # a force-push's message: the pins on a commit it dropped
            lines.append(_dropped_pin_line(pin, public_url, repo, markdown))
        elif pin.get("restored"):  # a restore's message: the pins on a commit back on the main line
            lines.append(_restored_pin_line(pin, public_url, repo, markdown))
        else:
            pins.setdefault(str(pin.get("advisory")), []).append(one_line(pin.get("where", ""), 200))
    for osv in payload.get("advisories", []):
        advisory_id, summary = _advisory_line(osv)
        url = advisory_url(public_url, advisory_id)
        where = pins.get(advisory_id, [])
        on_pin = f" — affects your pin at {', '.join(where)}" if where else ""
        if markdown:
            shown = f" — affects your pin at {', '.join(f'`{w}`' for w in where)}" if where else ""
            lines.append(f"- advisory [{escape_md(advisory_id)}]({url}): {escape_md(summary)}{shown}")
        else:
            lines.append(f"- advisory {advisory_id}: {summary}{on_pin} ({url})")
    return lines


def _dropped_pin_line(pin: Mapping[str, Any], public_url: str, repo: str, markdown: bool) -> str:
    at, revision = one_line(pin.get("where", ""), 200), str(pin.get("revision") or "")[:12]
    target = str(pin.get("move_to") or "")
    if not target:
        move = ""
    elif markdown:
        move = f" — move to [{target[:12]}]({revision_url(public_url, repo, target)})"
    else:
        move = f" — move to {target}"
    shown = f"`{at}`" if markdown else at
    return f"- your pin at {shown} is on {revision}, a commit upstream dropped{move}"


def _restored_pin_line(pin: Mapping[str, Any], public_url: str, repo: str, markdown: bool) -> str:
    at, revision = one_line(pin.get("where", ""), 200), str(pin.get("revision") or "")
    if markdown:
        return (f"- your pin at `{at}` is on [{revision[:12]}]({revision_url(public_url, repo, revision)}), "
                "back on the main line upstream")
    return f"- your pin at {at} is on {revision[:12]}, back on the main line upstream"


def render(payloads: Sequence[Mapping[str, Any]], public_url: str, key: str, digest: str | None = None) -> Outgoing:
    """One message for `payloads` (one revision, or a digest / a rate-limited group of several)."""
    worst = _worst(payloads)
    tag = f"[{worst.value.upper()}] " if worst else ""
    if len(payloads) == 1 and digest is None:
        only = payloads[0]
        title = f"{tag}{one_line(only['repo'])}: {one_line(only.get('title', ''), 150)}"
    else:
        repos = sorted({str(p["repo"]) for p in payloads})
        period = f"{digest} digest: " if digest else ""
        title = f"{tag}hubwatch {period}{len(payloads)} revisions in {len(repos)} repo{'s' if len(repos) != 1 else ''}"
    markdown = "\n\n".join("\n".join(_section(p, public_url, True)) for p in payloads)
    text = "\n\n".join("\n".join(_section(p, public_url, False)) for p in payloads)
    data = {
        "worst_severity": worst.value if worst else None,
        "digest": digest,
        "revisions": [
            {
                **dict(p),
                "links": {
                    "revision": revision_url(public_url, str(p["repo"]), str(p["sha"])),
                    "advisories": {str(a.get("id")): advisory_url(public_url, str(a.get("id")))
                                   for a in p.get("advisories", [])},  # fmt: skip
                },
            }
            for p in payloads
        ],
    }
    msg_id = "msg_" + hashlib.sha256(key.encode()).hexdigest()[:32]
    return Outgoing(msg_id, one_line(title, 250), markdown, text, data)
