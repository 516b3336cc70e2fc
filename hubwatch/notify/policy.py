"""What a subscription is sent: its filters, what is news, and the message each event makes.

Storage writes the outbox rows in the transaction that stores what they announce
(`hubwatch.storage.notify.notify`), but decides nothing: it asks this policy, handed to the `Store` by
`hubwatch.wiring`, which message (if any) a revision, a head move or a re-derived advisory makes
for each subscription, and when it is due. The message is the outbox payload the sender reads
(`hubwatch.notify.message`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, RepoId, RevisionRecord, Severity
from hubwatch.storage.core.coltypes import checked_utc
from hubwatch.storage.notify.notify import HeadMove, Subscription
from hubwatch.storage.core.validate import clean_text

__all__ = [
    "TOP_CHANGES",
    "NotifyPolicy",
    "digest_due",
    "is_news",
    "matches_repo",
    "wants",
    "wants_advisory",
]

TOP_CHANGES = 10  # changes a message lists in words (the most severe first); the count says the rest


def matches_repo(sub: Subscription, repo: RepoId) -> bool:
    """Whether a revision of `repo` concerns `sub` (before kinds and severity)."""
    key, org = str(repo).lower(), repo.org.lower()
    if sub.pins_path is not None and key not in sub.pin_repos:
        return False
    if not sub.repos and not sub.orgs:
        return True
    return key in sub.repos or org in sub.orgs


def wants(sub: Subscription, kind: str, severity: Severity | None) -> bool:
    """Whether a change (or an advisory) of `kind` and `severity` passes `sub`'s filters."""
    if sub.kinds and kind not in sub.kinds:
        return False
    if sub.min_severity is None:
        return True
    return severity is None or severity.rank >= sub.min_severity.rank


def wants_advisory(sub: Subscription, kinds: Sequence[str], severity: Severity | None) -> bool:
    """Whether an advisory, naming the change `kinds` it is about, passes `sub`'s filters."""
    if sub.kinds and not set(kinds) & set(sub.kinds):
        return False
    return wants(sub, sub.kinds[0] if sub.kinds else "", severity)


def digest_due(now: datetime, digest: str) -> datetime:
    """When a digest of period `digest` holding something enqueued at `now` is delivered: the end of
    the UTC day (daily) or of the ISO week, Monday 00:00 UTC (weekly)."""
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if digest == "weekly":
        return day + timedelta(days=7 - day.weekday())
    return day + timedelta(days=1)


def _rewrite_change(change: ChangeRecord) -> bool:
    return isinstance(change.detail, Mapping) and change.detail.get("history_rewrite") is True


def is_news(revision: RevisionRecord, changes: Sequence[ChangeRecord]) -> bool:
    """Whether a revision's changes are news. A repo's first revision is where it starts, not a
    change: only its advisories are news; a squashed history's new root carries the force-push and
    was compared with the old head, so it is news."""
    return revision.parent is not None or any(_rewrite_change(c) for c in changes)


def _severity(value: object) -> Severity | None:
    try:
        return Severity(value)
    except ValueError:
        return None


def _advisory_facts(record: AdvisoryRecord) -> tuple[tuple[str, ...], Severity | None]:
    raw = record.osv.get("database_specific")
    ds: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    kinds = tuple(str(k) for k in ds.get("kinds", []) if isinstance(k, str))
    return kinds, _severity(ds.get("max_severity"))


def _inherited(record: AdvisoryRecord) -> bool:
    raw = record.osv.get("database_specific")
    return isinstance(raw, Mapping) and isinstance(raw.get("inherited"), Mapping)


def _shown(shas: Sequence[str]) -> str:
    return ", ".join(s[:12] for s in shas[:5]) + (" …" if len(shas) > 5 else "")


def _head_move_summary(move: HeadMove) -> str:
    count = len(move.shas)
    plural = "" if count == 1 else "s"
    if move.what == "rewrite":
        return (f"history rewritten upstream: {count} stored revision{plural} no "
                f"longer on the main line ({_shown(move.shas)}); the head is now {move.new_head[:12]}")
    return (f"history restored upstream: {count} stored revision{plural} "
            f"back on the main line ({_shown(move.shas)}); the head is now {move.new_head[:12]}")


class NotifyPolicy:
    """The policy `hubwatch.storage.notify.notify.OutboxPolicy` asks for: hubwatch's one."""

    def due_at(self, sub: Subscription, now: datetime) -> datetime:
        """When a message enqueued at `now` for `sub` is delivered: now, or with its digest."""
        return digest_due(now, sub.digest) if sub.digest else now

    def revision_message(
        self,
        sub: Subscription,
        repo: RepoId,
        revision: RevisionRecord,
        changes: Sequence[ChangeRecord],
        advisories: Sequence[AdvisoryRecord],
    ) -> dict[str, Any] | None:
        """The message a stored revision makes for `sub`, or None when nothing in it passes the filters."""
        if not matches_repo(sub, repo):
            return None
        wanted = [c for c in changes if wants(sub, c.kind.value, c.severity)]
        records = [a for a in advisories if a.withdrawn is None and wants_advisory(sub, *_advisory_facts(a))]
        if sub.pins_path is not None:
            wanted = []  # a pin subscription is about advisories on the pins (filtered when sent)
        elif not is_news(revision, changes):
            wanted = []
        if not wanted and not records:
            return None
        wanted.sort(key=lambda c: -c.severity.rank)
        severities = [c.severity for c in wanted] + [s for a in records if (s := _advisory_facts(a)[1]) is not None]
        worst = max(severities, key=lambda s: s.rank).value if severities else None
        return {
            "repo": str(repo),
            "sha": revision.sha,
            "parent": revision.parent,
            "title": clean_text(revision.title),
            "date": checked_utc(revision.date).isoformat(),
            "worst_severity": worst,
            "changes": [
                {
                    "kind": c.kind.value,
                    "severity": c.severity.value,
                    "direction": c.direction.value,
                    "path": clean_text(c.path),
                    "summary": clean_text(c.summary),
                }
                for c in wanted[:TOP_CHANGES]
            ],
            "changes_total": len(wanted),
            "advisories": [{**a.osv, "id": a.id} for a in records],
        }

    def head_move_message(self, sub: Subscription, repo: RepoId, move: HeadMove) -> dict[str, Any] | None:
        """The message of a head move no stored revision carries, for `sub`, or None.

        A subscription of the repo hears of it, filtered as its one change (kind files, info), when
        the move is `for_all`: a force-push that brings no new commit (one that does is told by its
        first new revision, which carries the rewrite as a change), or a restore. A `--pins`
        subscription hears of every one (whether a pin is concerned is decided when it is sent)."""
        if not matches_repo(sub, repo):
            return None
        if sub.pins_path is None and not (move.for_all and wants(sub, "files", Severity.INFO)):
            return None
        summary = _head_move_summary(move)
        shas = "dropped" if move.what == "rewrite" else "restored"
        return {
            "repo": str(repo),
            "sha": move.new_head,
            "parent": None,
            "title": summary,
            "date": checked_utc(move.at).isoformat(),
            "worst_severity": None,
            "changes": [{"kind": "files", "severity": "info", "direction": "update", "path": "", "summary": summary}],
            "changes_total": 1,
            "advisories": [],
            move.what: {"old_head": move.old_head, "new_head": move.new_head, shas: list(move.shas)},
        }

    def rederived_message(
        self, sub: Subscription, repo: RepoId, record: AdvisoryRecord, revision: RevisionRecord
    ) -> dict[str, Any] | None:
        """The message of an advisory raised for the first time after its revision was stored (a
        new advisory model, or the derivatives pass's inherited one), for `sub`, or None."""
        if not matches_repo(sub, repo):
            return None
        kinds, severity = _advisory_facts(record)
        if not wants_advisory(sub, kinds, severity):
            return None
        return {
            "repo": str(repo),
            "sha": record.revision_sha,
            "parent": revision.parent,
            "title": clean_text(revision.title),
            "date": checked_utc(revision.date).isoformat(),
            "worst_severity": severity.value if severity else None,
            "changes": [],
            "changes_total": 0,
            "advisories": [{**record.osv, "id": record.id}],
            # an inherited advisory (the derivatives pass: its base fixed a file it copied), or one a
            # newer advisory model found in a revision stored before
            **({"inherited": True} if _inherited(record) else {"rederived": True}),
        }
