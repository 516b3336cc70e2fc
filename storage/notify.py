"""Notifications out: subscriptions and the transactional outbox (every query about them).

`enqueue_revision` runs inside the transaction that stores a revision (storage.revisions), so a
message exists exactly when its revision does (and `enqueue_rewrite` inside the one that records a
force-push, storage.rewrites); the row's unique `key` (one per subscription and
revision) makes a replay a no-op. A sender claims due rows under a lease (as storage.leases does for
repos), then marks them sent, retried later, dead or skipped; all of that state is in the rows, so
a sender that crashed resumes where it stopped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from hubwatch.domain.clock import Clock, system_clock
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, RepoId, RevisionRecord, Severity
from hubwatch.storage.coltypes import checked_utc
from hubwatch.storage.errors import InvalidRecord
from hubwatch.storage.idempotent import insert_ignoring, insert_of
from hubwatch.storage.prepared import Prepared
from hubwatch.storage.transactions import Transactions
from hubwatch.storage.tables import ADVISORIES, NOTIFY_OUTBOX, NOTIFY_SUBSCRIPTIONS, REPOS, REVISIONS
from hubwatch.storage.validate import clean_text, is_storable
from sqlalchemy.engine import Connection, Engine

__all__ = [
    "DIGESTS",
    "TOP_CHANGES",
    "InBackoff",
    "NotifyStore",
    "OutboxCounts",
    "OutboxMessage",
    "Subscription",
    "SubscriptionSpec",
    "digest_due",
    "enqueue_rederived",
    "enqueue_restore",
    "enqueue_revision",
    "enqueue_rewrite",
    "unseen_advisories",
]

DIGESTS = {"daily": timedelta(days=1), "weekly": timedelta(days=7)}
TOP_CHANGES = 10  # changes a message lists in words (the most severe first); the count says the rest
_STATES = ("pending", "sent", "dead", "skipped")


@dataclass(frozen=True)
class SubscriptionSpec:
    """What `notify add` asks for (checked by the caller: the URL parses, the filters are known)."""

    url: str
    secret: str | None = None
    repos: tuple[str, ...] = ()  # org/name; matched case-insensitively
    orgs: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    min_severity: Severity | None = None
    pins_path: str | None = None
    pin_repos: tuple[str, ...] = ()  # the repos pinned under pins_path when it was scanned
    digest: str | None = None


@dataclass(frozen=True)
class Subscription:
    """A stored subscription."""

    id: int
    url: str
    secret: str | None
    repos: tuple[str, ...]
    orgs: tuple[str, ...]
    kinds: tuple[str, ...]
    min_severity: Severity | None
    pins_path: str | None
    pin_repos: tuple[str, ...]
    digest: str | None
    created_at: datetime

    def matches_repo(self, repo: RepoId) -> bool:
        """Whether a revision of `repo` concerns this subscription (before kinds and severity)."""
        key, org = str(repo).lower(), repo.org.lower()
        if self.pins_path is not None and key not in self.pin_repos:
            return False
        if not self.repos and not self.orgs:
            return True
        return key in self.repos or org in self.orgs

    def wants(self, kind: str, severity: Severity | None) -> bool:
        """Whether a change (or an advisory) of `kind` and `severity` passes the filters."""
        if self.kinds and kind not in self.kinds:
            return False
        if self.min_severity is None:
            return True
        return severity is None or severity.rank >= self.min_severity.rank

    def wants_advisory(self, kinds: Sequence[str], severity: Severity | None) -> bool:
        """Whether an advisory, naming the change `kinds` it is about, passes the filters."""
        if self.kinds and not set(kinds) & set(self.kinds):
            return False
        return self.wants(self.kinds[0] if self.kinds else "", severity)


@dataclass(frozen=True)
class OutboxMessage:
    """A claimed row of the outbox: what to deliver, to which subscription, how often tried."""

    id: int
    subscription_id: int
    key: str
    repo: str
    sha: str | None
    payload: dict[str, Any]
    attempts: int
    created_at: datetime


@dataclass(frozen=True)
class OutboxCounts:
    """Outbox rows by state; `failed`: pending rows that have failed at least once (retrying)."""

    pending: int = 0
    sent: int = 0
    failed: int = 0
    dead: int = 0
    skipped: int = 0
    by_subscription: dict[int, dict[str, int]] = field(default_factory=dict)


def _subscription(row: sa.Row[Any]) -> Subscription:
    return Subscription(
        id=int(row.id),
        url=str(row.url),
        secret=row.secret,
        repos=tuple(row.repos or ()),
        orgs=tuple(row.orgs or ()),
        kinds=tuple(row.kinds or ()),
        min_severity=Severity(row.min_severity) if row.min_severity else None,
        pins_path=row.pins_path,
        pin_repos=tuple(row.pin_repos or ()),
        digest=row.digest,
        created_at=row.created_at,
    )


def _check_spec(spec: SubscriptionSpec) -> None:
    if not isinstance(spec.url, str) or not spec.url.strip() or not is_storable(spec.url):
        raise InvalidRecord("a subscription needs a URL (text without NUL)")
    if spec.digest is not None and spec.digest not in DIGESTS:
        raise InvalidRecord(f"digest must be one of {', '.join(DIGESTS)}, got {spec.digest!r}")
    for value in (*spec.repos, *spec.orgs, *spec.kinds, *spec.pin_repos, spec.pins_path or ""):
        if not is_storable(value):
            raise InvalidRecord(f"subscription filter {value!r} holds a NUL character")


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


def digest_due(now: datetime, digest: str) -> datetime:
    """When a digest of period `digest` holding something enqueued at `now` is delivered: the end of
    the UTC day (daily) or of the ISO week, Monday 00:00 UTC (weekly)."""
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if digest == "weekly":
        return day + timedelta(days=7 - day.weekday())
    return day + timedelta(days=1)


def _payload(
    sub: Subscription,
    repo: RepoId,
    revision: RevisionRecord,
    changes: Sequence[ChangeRecord],
    advisories: Sequence[AdvisoryRecord],
) -> dict[str, Any] | None:
    """The message a revision makes for `sub`, or None when nothing in it passes the filters."""
    wanted = [c for c in changes if sub.wants(c.kind.value, c.severity)]
    records = [a for a in advisories if a.withdrawn is None and sub.wants_advisory(*_advisory_facts(a))]
    if sub.pins_path is not None:
        wanted = []  # a pin subscription is about advisories on the pins (filtered when sent)
    elif revision.parent is None and not any(_rewrite_change(c) for c in changes):
        # a repo's first revision is where it starts, not a change: only its advisories are news (a
        # squashed history's new root carries the force-push and was compared with the old head: news)
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


# Built once (storage.prepared): what every stored revision runs here.
_SUBSCRIPTIONS = Prepared(lambda _d: sa.select(NOTIFY_SUBSCRIPTIONS))
_REPO_NAME = Prepared(lambda _d: sa.select(REPOS.c.org, REPOS.c.name).where(REPOS.c.id == sa.bindparam("repo_id")))
_INSERT_OUTBOX = Prepared(lambda d: insert_of(d, NOTIFY_OUTBOX).on_conflict_do_nothing(index_elements=["key"]))


def enqueue_revision(
    conn: Connection,
    repo_id: int,
    revision: RevisionRecord,
    changes: Sequence[ChangeRecord],
    advisories: Sequence[AdvisoryRecord],
    now: datetime,
) -> int:
    """Write the messages the stored revision causes, in the caller's (the revision's) transaction;
    how many were new. One row per (subscription, revision): a replay inserts nothing."""
    subs = [_subscription(r) for r in conn.execute(_SUBSCRIPTIONS(conn)).all()]
    if not subs:
        return 0
    org, name = conn.execute(_REPO_NAME(conn), {"repo_id": repo_id}).one()
    repo = RepoId(str(org), str(name))
    rows = []
    for sub in subs:
        if not sub.matches_repo(repo):
            continue
        payload = _payload(sub, repo, revision, changes, advisories)
        if payload is None:
            continue
        rows.append(
            {
                "subscription_id": sub.id,
                "key": f"{sub.id}:{str(repo).lower()}@{revision.sha}",
                "repo": str(repo),
                "sha": revision.sha,
                "payload": payload,
                "state": "pending",
                "attempts": 0,
                "due_at": digest_due(now, sub.digest) if sub.digest else now,
                "created_at": now,
            }
        )
    if not rows:
        return 0
    result = conn.execute(_INSERT_OUTBOX(conn), rows)
    return max(int(result.rowcount), 0)


def enqueue_rewrite(
    conn: Connection, repo_id: int, old_head: str, new_head: str, dropped: Sequence[str], now: datetime, *,
    brings_commits: bool,
) -> int:
    """Announce a recorded force-push (upstream moved from `old_head` to `new_head`, and the stored
    `dropped` revisions left the main line), in its transaction: one row per subscription it is
    for, keyed by the subscription and the (old head, new head) pair, so a replay adds nothing.

    A push that brings new commits (`brings_commits`: its new head is not stored yet) is told by its
    first new revision, which carries the rewrite as a change (`_payload`); a push that brings none (upstream went back to a stored commit) has no
    revision to carry it, so subscriptions hear of it here, filtered as that change (kind files,
    info). A `--pins` subscription hears of every rewrite here, whatever its filters (whether a pin
    is on a dropped commit is decided when it is sent). How many rows were new."""
    shown = ", ".join(s[:12] for s in dropped[:5]) + (" …" if len(dropped) > 5 else "")
    summary = (f"history rewritten upstream: {len(dropped)} stored revision{'' if len(dropped) == 1 else 's'} no "
               f"longer on the main line ({shown}); the head is now {new_head[:12]}")
    return _enqueue_head_move(conn, repo_id, "rewrite", old_head, new_head, summary,
                              {"old_head": old_head, "new_head": new_head, "dropped": list(dropped)},
                              now, for_all=not brings_commits)


def enqueue_restore(
    conn: Connection, repo_id: int, old_head: str, new_head: str, restored: Sequence[str], now: datetime
) -> int:
    """Announce that upstream moved its head from `old_head` back onto stored commits a force-push
    had dropped (`restored`, now on the main line again; the head is `new_head`), in the transaction
    that moves the head: as a push that brings no commit is told (`enqueue_rewrite`), keyed by the
    subscription and the (old head, new head) pair. A `--pins` subscription hears of it only for a
    pin on a restored commit (decided when it is sent). How many rows were new."""
    shown = ", ".join(s[:12] for s in restored[:5]) + (" …" if len(restored) > 5 else "")
    summary = (f"history restored upstream: {len(restored)} stored revision{'' if len(restored) == 1 else 's'} "
               f"back on the main line ({shown}); the head is now {new_head[:12]}")
    return _enqueue_head_move(conn, repo_id, "restore", old_head, new_head, summary,
                              {"old_head": old_head, "new_head": new_head, "restored": list(restored)},
                              now, for_all=True)


def _enqueue_head_move(conn: Connection, repo_id: int, what: str, old_head: str, new_head: str, summary: str,
                       facts: dict[str, Any], now: datetime, *, for_all: bool) -> int:
    """One message of a head move (`what`: rewrite, restore) that no stored revision carries, under
    the payload key `what`: for the subscriptions of the repo that take its change (kind files,
    info) when `for_all`, and for every `--pins` one. How many rows were new."""
    subs = [_subscription(r) for r in conn.execute(_SUBSCRIPTIONS(conn)).all()]
    if not subs:
        return 0
    org, name = conn.execute(_REPO_NAME(conn), {"repo_id": repo_id}).one()
    repo = RepoId(str(org), str(name))
    payload = {
        "repo": str(repo),
        "sha": new_head,
        "parent": None,
        "title": summary,
        "date": checked_utc(now).isoformat(),
        "worst_severity": None,
        "changes": [{"kind": "files", "severity": "info", "direction": "update", "path": "", "summary": summary}],
        "changes_total": 1,
        "advisories": [],
        what: facts,
    }
    rows = [
        {"subscription_id": sub.id, "key": f"{sub.id}:{what}:{str(repo).lower()}:{old_head}..{new_head}",
         "repo": str(repo), "sha": new_head, "payload": payload, "state": "pending", "attempts": 0,
         "due_at": digest_due(now, sub.digest) if sub.digest else now, "created_at": now}
        for sub in subs
        if sub.matches_repo(repo)
        and (sub.pins_path is not None or (for_all and sub.wants("files", Severity.INFO)))
    ]
    if not rows:
        return 0
    result = conn.execute(_INSERT_OUTBOX(conn), rows)
    return max(int(result.rowcount), 0)


def _rewrite_change(change: ChangeRecord) -> bool:
    return isinstance(change.detail, Mapping) and change.detail.get("history_rewrite") is True


def unseen_advisories(conn: Connection, records: Sequence[AdvisoryRecord]) -> list[AdvisoryRecord]:
    """The records of `records` whose id the store does not hold yet and that are not withdrawn:
    what a re-derivation found that was never announced (read before they are upserted)."""
    ids = [r.id for r in records]
    if not ids:
        return []
    known = set(conn.execute(sa.select(ADVISORIES.c.id).where(ADVISORIES.c.id.in_(ids))).scalars())
    return [r for r in records if r.id not in known and r.withdrawn is None]


def _inherited(record: AdvisoryRecord) -> bool:
    raw = record.osv.get("database_specific")
    return isinstance(raw, Mapping) and isinstance(raw.get("inherited"), Mapping)


def enqueue_rederived(conn: Connection, repo_id: int, advisories: Sequence[AdvisoryRecord], now: datetime) -> int:
    """Announce advisories a re-derivation (a new advisory model) or the family pass (an inherited
    advisory, docs/families.md) raised for the first time, in its transaction: one row per
    (subscription, advisory), keyed `SUB:advisory:ID`, so a re-run adds nothing; an advisory already
    stored (announced with its revision) never reaches here. How many rows were new."""
    if not advisories:
        return 0
    subs = [_subscription(r) for r in conn.execute(_SUBSCRIPTIONS(conn)).all()]
    if not subs:
        return 0
    org, name = conn.execute(_REPO_NAME(conn), {"repo_id": repo_id}).one()
    repo = RepoId(str(org), str(name))
    revisions = {
        str(r.sha): r
        for r in conn.execute(
            sa.select(REVISIONS.c.sha, REVISIONS.c.parent_sha, REVISIONS.c.title, REVISIONS.c.date).where(
                REVISIONS.c.repo_id == repo_id, REVISIONS.c.sha.in_({a.revision_sha for a in advisories})
            )
        ).all()
    }
    rows = []
    for sub in subs:
        if not sub.matches_repo(repo):
            continue
        for record in advisories:
            kinds, severity = _advisory_facts(record)
            revision = revisions.get(record.revision_sha)
            if revision is None or not sub.wants_advisory(kinds, severity):
                continue
            payload = {
                "repo": str(repo),
                "sha": record.revision_sha,
                "parent": revision.parent_sha,
                "title": clean_text(revision.title),
                "date": checked_utc(revision.date).isoformat(),
                "worst_severity": severity.value if severity else None,
                "changes": [],
                "changes_total": 0,
                "advisories": [{**record.osv, "id": record.id}],
                # an inherited advisory (the family pass: its base fixed a file it copied), or one a
                # newer advisory model found in a revision stored before
                **({"inherited": True} if _inherited(record) else {"rederived": True}),
            }
            rows.append({"subscription_id": sub.id, "key": f"{sub.id}:advisory:{record.id}", "repo": str(repo),
                         "sha": record.revision_sha, "payload": payload, "state": "pending", "attempts": 0,
                         "due_at": digest_due(now, sub.digest) if sub.digest else now, "created_at": now})  # fmt: skip
    if not rows:
        return 0
    result = conn.execute(insert_ignoring(conn, NOTIFY_OUTBOX, ["key"]), rows)
    return max(int(result.rowcount), 0)


@dataclass(frozen=True)
class InBackoff:
    """Messages that failed and wait for their next attempt (`next_due`: the soonest; None when none wait)."""

    count: int = 0
    next_due: datetime | None = None


def _check_worker(worker_id: str, lease_s: float) -> None:
    if not isinstance(worker_id, str) or not 0 < len(worker_id) <= 200 or not is_storable(worker_id):
        raise InvalidRecord(f"worker id must be a string of 1 to 200 characters without NUL, got {worker_id!r}")
    if lease_s <= 0:
        raise InvalidRecord(f"lease must last more than 0 seconds, got {lease_s!r}")


class NotifyStore(Transactions):
    """Subscriptions and the outbox of one database. Thread-safe: each call is one transaction."""

    def __init__(self, engine: Engine, clock: Clock | None = None) -> None:
        self.engine = engine
        self._clock = clock or system_clock

    # -- subscriptions ------------------------------------------------------------------------
    def add(self, spec: SubscriptionSpec) -> Subscription:
        _check_spec(spec)
        now = self._clock()

        def insert(conn: Connection) -> Subscription:
            new_id = conn.execute(
                sa.insert(NOTIFY_SUBSCRIPTIONS)
                .values(
                    url=spec.url.strip(),
                    secret=spec.secret,
                    repos=sorted({r.lower() for r in spec.repos}),
                    orgs=sorted({o.lower() for o in spec.orgs}),
                    kinds=sorted(set(spec.kinds)),
                    min_severity=spec.min_severity.value if spec.min_severity else None,
                    pins_path=spec.pins_path,
                    pin_repos=sorted({r.lower() for r in spec.pin_repos}),
                    digest=spec.digest,
                    created_at=now,
                )
                .returning(NOTIFY_SUBSCRIPTIONS.c.id)
            ).scalar_one()
            row = conn.execute(sa.select(NOTIFY_SUBSCRIPTIONS).where(NOTIFY_SUBSCRIPTIONS.c.id == new_id)).one()
            return _subscription(row)

        return self._write(insert)

    def subscriptions(self) -> list[Subscription]:
        with self._read() as c:
            rows = c.execute(sa.select(NOTIFY_SUBSCRIPTIONS).order_by(NOTIFY_SUBSCRIPTIONS.c.id)).all()
        return [_subscription(r) for r in rows]

    def subscription(self, sub_id: int) -> Subscription | None:
        with self._read() as c:
            row = c.execute(sa.select(NOTIFY_SUBSCRIPTIONS).where(NOTIFY_SUBSCRIPTIONS.c.id == sub_id)).first()
        return None if row is None else _subscription(row)

    def remove(self, sub_id: int) -> bool:
        """Delete a subscription and its messages (sent or not); False when there is none."""

        def delete(conn: Connection) -> bool:
            conn.execute(sa.delete(NOTIFY_OUTBOX).where(NOTIFY_OUTBOX.c.subscription_id == sub_id))
            result = conn.execute(sa.delete(NOTIFY_SUBSCRIPTIONS).where(NOTIFY_SUBSCRIPTIONS.c.id == sub_id))
            return bool(result.rowcount)

        return self._write(delete)

    # -- the outbox ---------------------------------------------------------------------------
    def claim(self, worker_id: str, now: datetime, limit: int, lease_s: float) -> list[OutboxMessage]:
        """Lease up to `limit` due pending messages no live lease holds, oldest first.

        PostgreSQL locks the candidates FOR UPDATE SKIP LOCKED (concurrent senders pass over each
        other's rows); SQLite's write transaction admits one writer. The lease is set before commit.
        """
        _check_worker(worker_id, lease_s)
        now = checked_utc(now, "claim time")

        def claim(conn: Connection) -> list[OutboxMessage]:
            o = NOTIFY_OUTBOX.c
            query = (
                sa.select(o.id, o.subscription_id, o.key, o.repo, o.sha, o.payload, o.attempts, o.created_at)
                .where(
                    o.state == "pending",
                    o.due_at <= now,
                    sa.or_(o.lease_expires_at.is_(None), o.lease_expires_at <= now),
                )
                .order_by(o.due_at, o.id)
                .limit(limit)
            )
            if conn.dialect.name == "postgresql":
                query = query.with_for_update(skip_locked=True, of=NOTIFY_OUTBOX)
            rows = conn.execute(query).all()
            if rows:
                conn.execute(
                    sa.update(NOTIFY_OUTBOX)
                    .where(o.id.in_([r.id for r in rows]))
                    .values(lease_owner=worker_id, lease_expires_at=now + timedelta(seconds=lease_s))
                )
            return [
                OutboxMessage(int(r.id), int(r.subscription_id), str(r.key), str(r.repo), r.sha, dict(r.payload),
                              int(r.attempts), r.created_at)  # fmt: skip
                for r in rows
            ]

        return self._write(claim) if limit > 0 else []

    def _settle(self, ids: Sequence[int], worker_id: str, values: dict[str, Any]) -> int:
        if not ids:
            return 0
        stmt = (
            sa.update(NOTIFY_OUTBOX)
            .where(NOTIFY_OUTBOX.c.id.in_(list(ids)), NOTIFY_OUTBOX.c.lease_owner == worker_id)
            .values(lease_owner=None, lease_expires_at=None, **values)
        )
        return self._write(lambda c: int(c.execute(stmt).rowcount))

    def mark_sent(self, ids: Sequence[int], worker_id: str, at: datetime, message_id: str) -> int:
        """Delivered, all of `ids` at once as the one message `message_id` (its webhook-id)."""
        if not isinstance(message_id, str) or not 0 < len(message_id) <= 64 or not is_storable(message_id):
            raise InvalidRecord(f"message id must be 1 to 64 characters without NUL, got {message_id!r}")
        values = {"state": "sent", "sent_at": at, "last_error": None, "message_id": message_id}
        return self._settle(ids, worker_id, values)

    def release(self, ids: Sequence[int], worker_id: str) -> int:
        """Give claimed rows back untried (the sender is stopping): no attempt counted, due as before."""
        return self._settle(ids, worker_id, {})

    def mark_skipped(self, ids: Sequence[int], worker_id: str, why: str) -> int:
        """Nothing to say after all (e.g. no pin is affected); kept, never sent."""
        return self._settle(ids, worker_id, {"state": "skipped", "last_error": why[:2000]})

    def mark_failed(self, ids: Sequence[int], worker_id: str, error: str, retry_at: datetime | None) -> int:
        """One more failed attempt: retried at `retry_at`, or dead when it is None."""
        values: dict[str, Any] = {
            "attempts": NOTIFY_OUTBOX.c.attempts + 1,
            "last_error": clean_text(error)[:2000],
            "state": "pending" if retry_at is not None else "dead",
        }
        if retry_at is not None:
            values["due_at"] = retry_at
        return self._settle(ids, worker_id, values)

    def _backoff_rows(self, now: datetime) -> Any:
        """Pending rows that failed at least once and are not due before `now`, no live lease on them."""
        o = NOTIFY_OUTBOX.c
        return sa.and_(o.state == "pending", o.attempts > 0, o.due_at > now,
                       sa.or_(o.lease_expires_at.is_(None), o.lease_expires_at <= now))  # fmt: skip

    def in_backoff(self, now: datetime) -> InBackoff:
        """How many failed messages wait for their next attempt after `now`, and the soonest of those."""
        now = checked_utc(now, "backoff time")
        o = NOTIFY_OUTBOX.c
        with self._read() as c:
            count, soonest = c.execute(sa.select(sa.func.count(), sa.func.min(o.due_at)).where(self._backoff_rows(now))).one()
        return InBackoff(int(count), soonest if count else None)

    def retry_now(self, now: datetime) -> int:
        """Make every message waiting in backoff due at `now` (`notify flush --now`); how many. Their
        attempts stand: a failure now backs off from the next step, and a message dead is still dead."""
        now = checked_utc(now, "retry time")
        stmt = sa.update(NOTIFY_OUTBOX).where(self._backoff_rows(now)).values(due_at=now)
        return self._write(lambda c: int(c.execute(stmt).rowcount))

    def postpone(self, ids: Sequence[int], worker_id: str, until: datetime) -> int:
        """Not tried yet (rate limit): due again at `until`, no attempt counted."""
        return self._settle(ids, worker_id, {"due_at": until})

    def sent_since(self, sub_ids: Sequence[int], since: datetime) -> dict[int, tuple[int, datetime | None]]:
        """Per subscription: messages delivered since `since` (distinct message ids: rows sent
        together as one message count once) and the oldest of those deliveries (when the rate-limit
        window frees up)."""
        if not sub_ids:
            return {}
        o = NOTIFY_OUTBOX.c
        with self._read() as c:
            rows = c.execute(
                sa.select(o.subscription_id, sa.func.count(sa.distinct(o.message_id)), sa.func.min(o.sent_at))
                .where(o.subscription_id.in_(list(sub_ids)), o.state == "sent", o.sent_at > since)
                .group_by(o.subscription_id)
            ).all()
        return {int(r[0]): (int(r[1]), r[2]) for r in rows}

    def counts(self) -> OutboxCounts:
        """Rows by state (one grouped query), in all and per subscription."""
        o = NOTIFY_OUTBOX.c
        failed = sa.and_(o.state == "pending", o.attempts > 0)
        bucket = sa.case((failed, "failed"), else_=o.state)
        with self._read() as c:
            rows = c.execute(
                sa.select(o.subscription_id, bucket.label("bucket"), sa.func.count()).group_by(o.subscription_id, bucket)
            ).all()
        totals = {name: 0 for name in (*_STATES, "failed")}
        per: dict[int, dict[str, int]] = {}
        for sub_id, name, count in rows:
            totals[str(name)] += int(count)
            per.setdefault(int(sub_id), {n: 0 for n in totals})[str(name)] = int(count)
        # failed rows are pending too: `pending` counts everything still to deliver
        return OutboxCounts(
            pending=totals["pending"] + totals["failed"],
            sent=totals["sent"],
            failed=totals["failed"],
            dead=totals["dead"],
            skipped=totals["skipped"],
            by_subscription=per,
        )

    def messages(self, sub_id: int | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """The newest outbox rows (state, attempts, last error), for `notify status` and the tests."""
        o = NOTIFY_OUTBOX.c
        query = sa.select(o.id, o.subscription_id, o.key, o.repo, o.sha, o.state, o.attempts, o.due_at,
                          o.last_error, o.created_at, o.sent_at, o.message_id).order_by(o.id.desc()).limit(limit)  # fmt: skip
        if sub_id is not None:
            query = query.where(o.subscription_id == sub_id)
        with self._read() as c:
            return [dict(r._mapping) for r in c.execute(query).all()]
