"""Build Atom, RSS and JSON Feed documents from the store's feed items (pure; no clock, no I/O).

One entry per revision. Its id is derived from data that never changes once published
(the revision's date, the repo's first id and the commit), and every timestamp comes from the
data, so the same items always give the same bytes (and the same ETag). The repo's first id is the
one the store first knew it by: a rename upstream changes titles and links, never an entry's id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from html import escape as html_escape

from feedgen.feed import FeedGenerator
from markupsafe import Markup, escape

from hubwatch.feeds.builders.fidelity import by_importance
from hubwatch.feeds.text import as_utc, page_path, rfc3339, short_sha, xml_safe
from hubwatch.domain.records import ChangeRecord, RepoId, RevisionRecord
from hubwatch.storage.core.values import HistoryRestore, HistoryRewrite, RepoRename

__all__ = [
    "EPOCH",
    "FeedEntry",
    "FeedMeta",
    "atom_bytes",
    "entry_id",
    "feed_entries",
    "json_feed",
    "merge_newest_first",
    "rename_entries",
    "restore_entries",
    "rewrite_entries",
    "rss_bytes",
]

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class FeedItemLike(Protocol):
    """What the builder reads of the store's FeedItem."""

    @property
    def repo(self) -> RepoId: ...
    @property
    def revision(self) -> RevisionRecord: ...
    @property
    def changes(self) -> Sequence[ChangeRecord]: ...
    @property
    def advisory_ids(self) -> Sequence[str]: ...
    @property
    def origin(self) -> RepoId | None: ...


@dataclass(frozen=True)
class FeedMeta:
    """The feed itself: a permanent id, a title, where it lives and the page it describes."""

    id: str
    title: str
    subtitle: str
    self_url: str
    home_url: str


@dataclass(frozen=True)
class FeedEntry:
    id: str
    title: str
    url: str
    updated: datetime
    text: str
    html: str
    tags: tuple[str, ...]
    author: str | None


def entry_id(repo: RepoId, revision: RevisionRecord, origin: RepoId | None = None) -> str:
    """The permanent id of a revision's entry (RFC 4151 tag URI): never changes once published.
    `origin` is the repo's first id (the store's `first_id`), which a rename does not change."""
    day = as_utc(revision.date).strftime("%Y-%m-%d")
    return f"tag:hubwatch,{day}:{origin or repo}/{revision.sha}"


def _title(repo: RepoId, revision: RevisionRecord, changes: Sequence[ChangeRecord]) -> str:
    head = f"{repo} @ {short_sha(revision.sha)}"
    if not changes:
        return f"{head}: {revision.title or 'new revision'}"
    worst = by_importance(changes)[0]  # most severe; a hazard (custom code first) before an update
    more = f" (+{len(changes) - 1} more)" if len(changes) > 1 else ""
    return f"{head}: {worst.kind.value}/{worst.severity.value}: {worst.summary}{more}"


def _html(item: FeedItemLike, base_url: str) -> str:
    revision = item.revision
    parts: list[Markup] = [
        Markup("<p>Commit <code>{}</code> — {}</p>").format(revision.sha, revision.title or "(no message)")
    ]
    if item.changes:
        rows = Markup("").join(
            Markup("<li><strong>{}/{}</strong> <code>{}</code>: {}</li>").format(
                c.kind.value, c.severity.value, c.path, c.summary
            )
            for c in by_importance(item.changes)
        )
        parts.append(Markup("<ul>{}</ul>").format(rows))
    else:
        parts.append(Markup("<p>No tracked change.</p>"))
    if item.advisory_ids:
        links = Markup(", ").join(
            Markup('<a href="{}">{}</a>').format(f"{base_url}/advisories/{a}", a) for a in item.advisory_ids
        )
        parts.append(Markup("<p>Advisories: {}</p>").format(links))
    return str(escape(Markup("").join(parts)))


def _text(item: FeedItemLike) -> str:
    lines = [f"{c.kind.value}/{c.severity.value}: {c.summary}" for c in by_importance(item.changes)]
    if item.advisory_ids:
        lines.append("Advisories: " + ", ".join(item.advisory_ids))
    return "\n".join(lines) or (item.revision.title or "new revision")


def feed_entries(items: Iterable[FeedItemLike], base_url: str) -> list[FeedEntry]:
    """Entries for `items`, newest first (ties broken by repo and sha, so the order is stable)."""
    entries = []
    for item in items:
        revision = item.revision
        url = f"{base_url}{page_path(item.repo)}/revisions/{revision.sha}"
        tags = tuple(sorted({c.kind.value for c in item.changes} | {c.severity.value for c in item.changes}))
        entries.append(
            FeedEntry(
                id=entry_id(item.repo, revision, item.origin),
                title=xml_safe(_title(item.repo, revision, item.changes)),
                url=url,
                updated=as_utc(revision.date),
                text=xml_safe(_text(item)),
                html=xml_safe(_html(item, base_url)),
                tags=tags,
                author=xml_safe(", ".join(revision.authors)) or None,
            )
        )
    return merge_newest_first(entries)


def merge_newest_first(*groups: Sequence[FeedEntry]) -> list[FeedEntry]:
    """All entries newest first (ties broken by id, so the order is stable)."""
    entries = [e for group in groups for e in group]
    entries.sort(key=lambda e: e.id)
    entries.sort(key=lambda e: e.updated, reverse=True)
    return entries


def rewrite_entries(rewrites: Iterable[HistoryRewrite], base_url: str) -> list[FeedEntry]:
    """Entries for force-pushes (files/medium): stored revisions no longer on the main branch."""
    entries = []
    for rw in rewrites:
        n = len(rw.dropped)
        dropped = ", ".join(short_sha(s) for s in rw.dropped)
        summary = f"history rewritten: {n} stored revision{'s' if n != 1 else ''} no longer on the main branch ({dropped})"
        html = Markup("<p>Force-push: the main branch moved from <code>{}</code> to <code>{}</code>.</p><p>{}</p>").format(
            rw.old_head, rw.new_head, summary
        )
        entries.append(_head_move_entry("rewrite", rw.origin or rw.repo, rw.repo, rw.old_head, rw.new_head,
                                        rw.detected_at, summary, html, base_url))
    return entries


def restore_entries(restores: Iterable[HistoryRestore], base_url: str) -> list[FeedEntry]:
    """Entries for restores (files/medium): stored revisions a force-push dropped, back on the main
    branch because upstream pushed them again."""
    entries = []
    for rs in restores:
        n = len(rs.restored)
        restored = ", ".join(short_sha(s) for s in rs.restored)
        summary = f"history restored: {n} stored revision{'s' if n != 1 else ''} back on the main branch ({restored})"
        html = Markup("<p>Pushed back: the main branch moved from <code>{}</code> onto <code>{}</code>, stored "
                      "before and dropped by a force-push.</p><p>{}</p>").format(rs.old_head, rs.new_head, summary)
        entries.append(_head_move_entry("restore", rs.origin or rs.repo, rs.repo, rs.old_head, rs.new_head,
                                        rs.detected_at, summary, html, base_url))
    return entries


def _head_move_entry(what: str, origin: RepoId, repo: RepoId, old_head: str, new_head: str, detected_at: datetime,
                     summary: str, html: Markup, base_url: str) -> FeedEntry:
    """The feed entry of a head move no revision carries (`what`: rewrite, restore), files/medium."""
    day = as_utc(detected_at).strftime("%Y-%m-%d")
    return FeedEntry(
        id=f"tag:hubwatch,{day}:{origin}/{what}/{old_head}..{new_head}",
        title=xml_safe(f"{repo} @ {short_sha(new_head)}: files/medium: {summary}"),
        url=f"{base_url}{page_path(repo)}",
        updated=as_utc(detected_at),
        text=f"files/medium: {summary}",
        html=str(escape(html)),
        tags=("files", "medium"),
        author=None,
    )


RENAME_SUMMARY = "renamed upstream from {old} to {new}"


def rename_entries(renames: Iterable[RepoRename], base_url: str) -> list[FeedEntry]:
    """Entries for renames seen upstream (files/medium: the hub redirects the old id, but a repo
    created later under the old id would take over every pin and download still naming it)."""
    entries = []
    for rn in renames:
        day = as_utc(rn.renamed_at).strftime("%Y-%m-%d")
        summary = RENAME_SUMMARY.format(old=rn.old, new=rn.new)
        html = Markup(
            "<p>The hub answers <code>{}</code> under its new id <code>{}</code>: it redirects the old id for now, "
            "but a repo created later under the old id would take over what still names it. Update pins and "
            "downloads to the new id.</p>"
        ).format(rn.old, rn.new)
        entries.append(
            FeedEntry(
                id=f"tag:hubwatch,{day}:{rn.origin or rn.repo}/renamed/{rn.old.key}",
                title=xml_safe(f"{rn.new}: files/medium: {summary}"),
                url=f"{base_url}{page_path(rn.repo)}",
                updated=as_utc(rn.renamed_at),
                text=xml_safe(f"files/medium: {summary}"),
                html=str(escape(html)),
                tags=("files", "medium"),
                author=None,
            )
        )
    return entries


def _newest(entries: Sequence[FeedEntry]) -> datetime:
    return max((e.updated for e in entries), default=EPOCH)


def _generator(meta: FeedMeta, entries: Sequence[FeedEntry]) -> FeedGenerator:
    fg = FeedGenerator()
    fg.id(meta.id)
    fg.title(xml_safe(meta.title))
    fg.subtitle(xml_safe(meta.subtitle))
    # feedgen makes the last link the RSS channel's <link>: that must be the HTML page, not the feed.
    fg.link(href=meta.self_url, rel="self")
    fg.link(href=meta.home_url, rel="alternate")
    fg.generator("hubwatch")
    newest = _newest(entries)
    fg.updated(newest)
    fg.lastBuildDate(newest)
    for entry in entries:
        fe = fg.add_entry(order="append")
        fe.id(entry.id)
        fe.title(entry.title)
        fe.link(href=entry.url, rel="alternate")
        fe.updated(entry.updated)
        fe.published(entry.updated)
        fe.summary(entry.text)  # Atom <summary type="text">: the text as it is
        # RSS <description> is HTML by convention (feedparser and readers parse it as such): the text
        # is escaped as HTML before XML escapes it again, so a reader shows exactly the original text
        # and a `<script>` in remote text comes back as text, never as a tag.
        fe.description(html_escape(entry.text, quote=False))
        fe.content(entry.html, type="html")  # Atom content and RSS content:encoded
        if entry.author:
            fe.author(name=entry.author)
        for tag in entry.tags:
            fe.category(term=tag)
    return fg


def atom_bytes(meta: FeedMeta, entries: Sequence[FeedEntry]) -> bytes:
    """The Atom 1.0 document (entries in the given order)."""
    result: bytes = _generator(meta, entries).atom_str(pretty=True)
    return result


def rss_bytes(meta: FeedMeta, entries: Sequence[FeedEntry]) -> bytes:
    """The RSS 2.0 document (entries in the given order)."""
    result: bytes = _generator(meta, entries).rss_str(pretty=True)
    return result


def json_feed(meta: FeedMeta, entries: Sequence[FeedEntry]) -> dict[str, Any]:
    """A JSON Feed 1.1 document (https://jsonfeed.org/version/1.1)."""
    items: list[dict[str, Any]] = []
    for entry in entries:
        item: dict[str, Any] = {
            "id": entry.id,
            "url": entry.url,
            "title": entry.title,
            "content_html": entry.html,
            "content_text": entry.text,
            "date_published": rfc3339(entry.updated),
            "date_modified": rfc3339(entry.updated),
            "tags": list(entry.tags),
        }
        if entry.author:
            item["authors"] = [{"name": entry.author}]
        items.append(item)
    return {
        "version": "https://jsonfeed.org/version/1.1",
        "title": meta.title,
        "description": meta.subtitle,
        "home_page_url": meta.home_url,
        "feed_url": meta.self_url,
        "items": items,
    }
