"""Notifications out: subscriptions and the transactional outbox (every query about them).

`enqueue_revision` runs inside the transaction that stores a revision (storage.revisions), so a
message exists exactly when its revision does (and `enqueue_rewrite` inside the one that records a
force-push, storage.rewrites); the row's unique `key` (one per subscription and
revision) makes a replay a no-op. What each subscription is sent is not decided here: the
`OutboxPolicy` the store was given (`hubwatch.notify.policy`, by `hubwatch.wiring`) makes each
message and says when it is due. A sender claims due rows under a lease (as storage.leases does for
repos), then marks them sent, retried later, dead or skipped; all of that state is in the rows, so
a sender that crashed resumes where it stopped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

import sqlalchemy as sa
from hubwatch.domain.clock import Clock, system_clock
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, RepoId, RepoType, RevisionRecord, Severity
from hubwatch.storage.core.coltypes import checked_utc
from hubwatch.storage.errors import InvalidRecord, StorageError
from hubwatch.storage.core.idempotent import insert_ignoring, insert_of
from hubwatch.storage.core.prepared import Prepared
from hubwatch.storage.core.transactions import Transactions
from hubwatch.storage.core.tables import ADVISORIES, NOTIFY_OUTBOX, NOTIFY_SUBSCRIPTIONS, REPOS, REVISIONS
from hubwatch.storage.core.validate import clean_text, is_storable
from sqlalchemy.engine import Connection, Engine

__all__ = [
    "DIGESTS",
    "HeadMove",
    "InBackoff",
    "NoNotifyPolicy",
    "NotifyStore",
    "OutboxCounts",
    "OutboxMessage",
    "OutboxPolicy",
    "Subscription",
    "SubscriptionSpec",
    "enqueue_rederived",
    "enqueue_restore",
    "enqueue_revision",
    "enqueue_rewrite",
    "typed_payload",
    "unseen_advisories",
]

DIGESTS = {"daily": timedelta(days=1), "weekly": timedelta(days=7)}
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


def typed_payload(stored: Any) -> dict[str, Any]:
    """A stored payload as the sender reads it: its `worst_severity` (JSON text in the row) the
    domain's `Severity`, or None when absent or not a severity."""
    payload = dict(stored)
    if "worst_severity" in payload:
        value = payload["worst_severity"]
        payload["worst_severity"] = Severity(value) if isinstance(value, str) and value in _SEVERITIES else None
    return payload


_SEVERITIES = frozenset(s.value for s in Severity)


@dataclass(frozen=True)
class OutboxMessage:
    """A claimed row of the outbox: what to deliver, to which subscription, how often tried; the
    payload's `worst_severity` is a `Severity` (or None)."""

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


# Built once (storage.prepared): what every stored revision runs here.
_SUBSCRIPTIONS = Prepared(lambda _d: sa.select(NOTIFY_SUBSCRIPTIONS))
_REPO_NAME = Prepared(lambda _d: sa.select(REPOS.c.org, REPOS.c.name, REPOS.c.repo_type).where(REPOS.c.id == sa.bindparam("repo_id")))
_INSERT_OUTBOX = Prepared(lambda d: insert_of(d, NOTIFY_OUTBOX).on_conflict_do_nothing(index_elements=["key"]))


@dataclass(frozen=True)
class HeadMove:
    """A recorded move of a repo's head that no stored revision carries: a force-push
    (`rewrite`: `shas` the stored revisions it dropped) or a return onto dropped commits
    (`restore`: `shas` those back on the main line), dated `at`. `for_all`: every subscription of
    the repo may hear of it, not only `--pins` ones (a push that brings commits is told by its first
    new revision instead)."""

    what: Literal["rewrite", "restore"]
    old_head: str
    new_head: str
    shas: tuple[str, ...]
    at: datetime
    for_all: bool


class OutboxPolicy(Protocol):
    """What each subscription is sent, asked in the transaction that stores the event; None: nothing.
    hubwatch's is `hubwatch.notify.policy.NotifyPolicy` (storage holds no notification policy)."""

    def due_at(self, sub: Subscription, now: datetime) -> datetime: ...

    def revision_message(
        self, sub: Subscription, repo: RepoId, revision: RevisionRecord, changes: Sequence[ChangeRecord],
        advisories: Sequence[AdvisoryRecord],
    ) -> dict[str, Any] | None: ...

    def head_move_message(self, sub: Subscription, repo: RepoId, move: HeadMove) -> dict[str, Any] | None: ...

    def rederived_message(
        self, sub: Subscription, repo: RepoId, record: AdvisoryRecord, revision: RevisionRecord
    ) -> dict[str, Any] | None: ...


class NoNotifyPolicy(StorageError):
    """The store holds subscriptions but was opened without an `OutboxPolicy` to say what they are sent."""


def _subscribers(
    conn: Connection, repo_id: int, policy: OutboxPolicy | None
) -> tuple[list[Subscription], RepoId, OutboxPolicy] | None:
    """Every subscription, the repo as the store names it and the policy; None when there is no
    subscription (nothing else is read then)."""
    subs = [_subscription(r) for r in conn.execute(_SUBSCRIPTIONS(conn)).all()]
    if not subs:
        return None
    if policy is None:
        raise NoNotifyPolicy("this store holds subscriptions but has no notification policy: open it with "
                             "notify=hubwatch.notify.policy.NotifyPolicy() (hubwatch.wiring.open_store does)")
    org, name, repo_type = conn.execute(_REPO_NAME(conn), {"repo_id": repo_id}).one()
    return subs, RepoId(str(org), str(name), RepoType(repo_type)), policy


def _row(sub: Subscription, key: str, repo: RepoId, sha: str, payload: dict[str, Any], due_at: datetime,
         now: datetime) -> dict[str, Any]:
    return {"subscription_id": sub.id, "key": key, "repo": str(repo), "sha": sha, "payload": payload,
            "state": "pending", "attempts": 0, "due_at": due_at, "created_at": now}


def enqueue_revision(
    conn: Connection,
    repo_id: int,
    revision: RevisionRecord,
    changes: Sequence[ChangeRecord],
    advisories: Sequence[AdvisoryRecord],
    now: datetime,
    policy: OutboxPolicy | None,
) -> int:
    """Write the messages the stored revision causes, in the caller's (the revision's) transaction;
    how many were new. One row per (subscription, revision): a replay inserts nothing."""
    found = _subscribers(conn, repo_id, policy)
    if found is None:
        return 0
    subs, repo, policy = found
    rows = []
    for sub in subs:
        payload = policy.revision_message(sub, repo, revision, changes, advisories)
        if payload is not None:
            key = f"{sub.id}:{str(repo).lower()}@{revision.sha}"
            rows.append(_row(sub, key, repo, revision.sha, payload, policy.due_at(sub, now), now))
    if not rows:
        return 0
    result = conn.execute(_INSERT_OUTBOX(conn), rows)
    return max(int(result.rowcount), 0)


def enqueue_rewrite(
    conn: Connection, repo_id: int, old_head: str, new_head: str, dropped: Sequence[str], now: datetime,
    policy: OutboxPolicy | None, *, brings_commits: bool,
) -> int:
    """Announce a recorded force-push (upstream moved from `old_head` to `new_head`, and the stored
    `dropped` revisions left the main line), in its transaction: one row per subscription the policy
    has a message for, keyed by the subscription and the (old head, new head) pair, so a replay adds
    nothing. A push that brings new commits (`brings_commits`: its new head is not stored yet) is
    told by its first new revision, which carries the rewrite as a change. How many rows were new."""
    move = HeadMove("rewrite", old_head, new_head, tuple(dropped), now, for_all=not brings_commits)
    return _enqueue_head_move(conn, repo_id, move, policy)


def enqueue_restore(
    conn: Connection, repo_id: int, old_head: str, new_head: str, restored: Sequence[str], now: datetime,
    policy: OutboxPolicy | None,
) -> int:
    """Announce that upstream moved its head from `old_head` back onto stored commits a force-push
    had dropped (`restored`, now on the main line again; the head is `new_head`), in the transaction
    that moves the head, as a push that brings no commit is told (`enqueue_rewrite`). How many rows
    were new."""
    move = HeadMove("restore", old_head, new_head, tuple(restored), now, for_all=True)
    return _enqueue_head_move(conn, repo_id, move, policy)


def _enqueue_head_move(conn: Connection, repo_id: int, move: HeadMove, policy: OutboxPolicy | None) -> int:
    found = _subscribers(conn, repo_id, policy)
    if found is None:
        return 0
    subs, repo, policy = found
    rows = []
    for sub in subs:
        payload = policy.head_move_message(sub, repo, move)
        if payload is not None:
            key = f"{sub.id}:{move.what}:{str(repo).lower()}:{move.old_head}..{move.new_head}"
            rows.append(_row(sub, key, repo, move.new_head, payload, policy.due_at(sub, move.at), move.at))
    if not rows:
        return 0
    result = conn.execute(_INSERT_OUTBOX(conn), rows)
    return max(int(result.rowcount), 0)


def unseen_advisories(conn: Connection, records: Sequence[AdvisoryRecord]) -> list[AdvisoryRecord]:
    """The records of `records` whose id the store does not hold yet and that are not withdrawn:
    what a re-derivation found that was never announced (read before they are upserted)."""
    ids = [r.id for r in records]
    if not ids:
        return []
    known = set(conn.execute(sa.select(ADVISORIES.c.id).where(ADVISORIES.c.id.in_(ids))).scalars())
    return [r for r in records if r.id not in known and r.withdrawn is None]


def enqueue_rederived(
    conn: Connection, repo_id: int, advisories: Sequence[AdvisoryRecord], now: datetime, policy: OutboxPolicy | None
) -> int:
    """Announce advisories a re-derivation (a new advisory model) or the derivatives pass (an inherited
    advisory, docs/derivatives.md) raised for the first time, in its transaction: one row per
    (subscription, advisory) the policy has a message for, keyed `SUB:advisory:ID`, so a re-run adds
    nothing; an advisory already stored (announced with its revision) never reaches here. How many
    rows were new."""
    if not advisories:
        return 0
    found = _subscribers(conn, repo_id, policy)
    if found is None:
        return 0
    subs, repo, policy = found
    revisions = {
        str(r.sha): RevisionRecord(str(r.sha), r.parent_sha, r.date, r.title)
        for r in conn.execute(
            sa.select(REVISIONS.c.sha, REVISIONS.c.parent_sha, REVISIONS.c.title, REVISIONS.c.date).where(
                REVISIONS.c.repo_id == repo_id, REVISIONS.c.sha.in_({a.revision_sha for a in advisories})
            )
        ).all()
    }
    rows = []
    for sub in subs:
        for record in advisories:
            revision = revisions.get(record.revision_sha)
            payload = None if revision is None else policy.rederived_message(sub, repo, record, revision)
            if payload is not None:
                rows.append(_row(sub, f"{sub.id}:advisory:{record.id}", repo, record.revision_sha, payload,
                                 policy.due_at(sub, now), now))
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
                OutboxMessage(int(r.id), int(r.subscription_id), str(r.key), str(r.repo), r.sha,
                              typed_payload(r.payload), int(r.attempts), r.created_at)  # fmt: skip
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
