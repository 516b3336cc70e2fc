"""The schema: SQLModel tables (the Alembic migrations in migrations/versions create the same)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from hubwatch.storage.core.coltypes import UTCDateTime
from sqlmodel import Field, SQLModel

__all__ = [
    "ADVISORIES",
    "ADVISORY_EVENTS",
    "ADVISORY_KEYS",
    "BLOBS",
    "CHANGES",
    "ESTIMATES",
    "ESTIMATE_BODIES",
    "FILE_VERSIONS",
    "HISTORY_RESTORES",
    "HISTORY_REWRITES",
    "NOTIFY_OUTBOX",
    "NOTIFY_SUBSCRIPTIONS",
    "POLL_CYCLES",
    "POLL_RUNS",
    "REPOS",
    "REPO_ALIASES",
    "REVISIONS",
    "STORE_META",
    "AdvisoryEventRow",
    "AdvisoryKeyRow",
    "AdvisoryRow",
    "BlobRow",
    "ChangeRow",
    "EstimateBodyRow",
    "EstimateRow",
    "FileVersionRow",
    "HistoryRestoreRow",
    "HistoryRewriteRow",
    "NotifyOutboxRow",
    "NotifySubscriptionRow",
    "PollCycleRow",
    "PollRunRow",
    "RepoAliasRow",
    "RepoRow",
    "RevisionRow",
    "StoreMetaRow",
]


def _ts(nullable: bool = True, index: bool = False) -> Any:
    return Field(default=None, sa_type=UTCDateTime, nullable=nullable, index=index)


class RepoRow(SQLModel, table=True):
    """A repo hubwatch knows of: watch flag, poll state, backoff and the worker lease."""

    __tablename__ = "repos"
    __table_args__ = (
        sa.UniqueConstraint("org", "name", "repo_type", name="uq_repos_org_name_type"),
        sa.Index("uq_repos_key", "key", unique=True),
        sa.Index("ix_repos_due", "watched", "next_poll_at"),
        sa.Index("ix_repos_type_watched", "repo_type", "watched"),  # is a dataset watched? (watched_types)
    )

    id: int | None = Field(default=None, primary_key=True)
    # "model" or "dataset" (domain.records.RepoType): a model and a dataset of one org/name are two rows
    repo_type: str = Field(default="model", sa_type=sa.String(16), sa_column_kwargs={"server_default": "model"})
    org: str = Field(sa_type=sa.String(96))  # spelled as the hub spells it (canonical)
    name: str = Field(sa_type=sa.String(96))
    # RepoId.key: lowercased org/name, datasets/org/name for a dataset (the hub resolves ids case-insensitively)
    key: str = Field(sa_type=sa.String(202))
    first_id: str = Field(sa_type=sa.String(202))  # the id first stored: feed entry ids stay stable across renames
    watched: bool = Field(default=True)
    state: str = Field(default="new", sa_type=sa.String(16))
    last_error: str | None = Field(default=None, sa_type=sa.Text)
    head_sha: str | None = Field(default=None, sa_type=sa.String(40))
    last_polled_at: datetime | None = _ts()
    next_poll_at: datetime | None = _ts()
    failures: int = Field(default=0)
    lease_owner: str | None = Field(default=None, sa_type=sa.String(200))
    lease_expires_at: datetime | None = _ts()
    created_at: datetime = Field(sa_type=UTCDateTime)
    # Summaries kept at write time (storage.summaries): stored revisions, and a counter raised by
    # every write that changes what derives from the history or the advisories.
    revision_count: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    history_version: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


class RevisionRow(SQLModel, table=True):
    """One upstream commit of a repo, with its place in the repo's linear history."""

    __tablename__ = "revisions"
    __table_args__ = (
        sa.UniqueConstraint("repo_id", "sha", name="uq_revisions_repo_sha"),
        sa.Index("ix_revisions_repo_position", "repo_id", "position"),
        sa.Index("ix_revisions_sha", "sha"),
        sa.Index("ix_revisions_date", "date"),
        sa.Index("ix_revisions_repo_date", "repo_id", "date", "id"),  # a repo's newest first, no sort
    )

    id: int | None = Field(default=None, primary_key=True)
    repo_id: int = Field(sa_column_args=[sa.ForeignKey("repos.id", ondelete="CASCADE")], nullable=False)
    sha: str = Field(sa_type=sa.String(40))
    parent_sha: str | None = Field(default=None, sa_type=sa.String(40))
    position: int
    date: datetime = Field(sa_type=UTCDateTime)
    title: str = Field(sa_type=sa.Text)
    message: str = Field(default="", sa_type=sa.Text)
    authors: list[str] = Field(default_factory=list, sa_type=sa.JSON)
    stored_at: datetime = Field(sa_type=UTCDateTime)


class BlobRow(SQLModel, table=True):
    """Content-addressed file content (sha256 of the raw bytes), compressed, shared by all revisions."""

    __tablename__ = "blobs"

    sha256: str = Field(primary_key=True, sa_type=sa.String(64))
    size: int = Field(sa_type=sa.BigInteger)
    compression: str = Field(default="zlib", sa_type=sa.String(16))
    data: bytes = Field(sa_type=sa.LargeBinary)
    stored_at: datetime = Field(sa_type=UTCDateTime)


class FileVersionRow(SQLModel, table=True):
    """One file of a revision's listing; `content_sha256` points at the stored content, if fetched."""

    __tablename__ = "file_versions"
    __table_args__ = (
        sa.UniqueConstraint("revision_id", "path", name="uq_file_versions_revision_path"),
        sa.Index("ix_file_versions_content", "content_sha256"),
    )

    id: int | None = Field(default=None, primary_key=True)
    revision_id: int = Field(sa_column_args=[sa.ForeignKey("revisions.id", ondelete="CASCADE")], nullable=False)
    path: str = Field(sa_type=sa.Text)
    size: int | None = Field(default=None, sa_type=sa.BigInteger)
    blob_id: str | None = Field(default=None, sa_type=sa.String(64))
    lfs_sha256: str | None = Field(default=None, sa_type=sa.String(64))
    content_sha256: str | None = Field(
        default=None, sa_type=sa.String(64), sa_column_args=[sa.ForeignKey("blobs.sha256")]
    )


class ChangeRow(SQLModel, table=True):
    """One classified change of a revision against its parent."""

    __tablename__ = "changes"
    __table_args__ = (
        sa.UniqueConstraint("revision_id", "ordinal", name="uq_changes_revision_ordinal"),
        sa.CheckConstraint("direction IN ('hazard', 'update')", name="ck_changes_direction"),
        sa.CheckConstraint("severity IN ('critical', 'high', 'medium', 'low', 'info')", name="ck_changes_severity"),
        sa.Index("ix_changes_kind", "kind"),
    )

    id: int | None = Field(default=None, primary_key=True)
    revision_id: int = Field(sa_column_args=[sa.ForeignKey("revisions.id", ondelete="CASCADE")], nullable=False)
    ordinal: int
    kind: str = Field(sa_type=sa.String(32))
    severity: str = Field(sa_type=sa.String(16))
    path: str = Field(sa_type=sa.Text)
    summary: str = Field(sa_type=sa.Text)
    detail: dict[str, Any] = Field(default_factory=dict, sa_type=sa.JSON)
    direction: str = Field(default="hazard", sa_type=sa.String(8))


class EstimateBodyRow(SQLModel, table=True):
    """An estimate's JSON, stored once however many revisions have it (keyed by the sha256 of its
    canonical JSON): most commits change no config, and their estimates are equal but for the
    revision they name, which `estimates.revision_json` keeps (the body holds null there)."""

    __tablename__ = "estimate_bodies"

    sha256: str = Field(primary_key=True, sa_type=sa.String(64))
    data: dict[str, Any] = Field(default_factory=dict, sa_type=sa.JSON)
    stored_at: datetime = Field(sa_type=UTCDateTime)


class EstimateRow(SQLModel, table=True):
    """The estimator's output for one revision and one estimator version: its body (shared) and
    the JSON of the revision it names (`revision_json`: NULL when the estimate has no such key)."""

    __tablename__ = "estimates"
    __table_args__ = (sa.UniqueConstraint("revision_id", "estimator_version", name="uq_estimates_revision_version"),)

    id: int | None = Field(default=None, primary_key=True)
    revision_id: int = Field(sa_column_args=[sa.ForeignKey("revisions.id", ondelete="CASCADE")], nullable=False)
    estimator_version: str = Field(sa_type=sa.String(64))
    body_sha256: str = Field(
        sa_type=sa.String(64), sa_column_args=[sa.ForeignKey("estimate_bodies.sha256")], nullable=False, index=True
    )
    revision_json: str | None = Field(default=None, sa_type=sa.Text, nullable=True)
    created_at: datetime = Field(sa_type=UTCDateTime)


class AdvisoryRow(SQLModel, table=True):
    """An OSV record as published, with its state; the GIT-range events are in advisory_events."""

    __tablename__ = "advisories"
    __table_args__ = (
        sa.Index("ix_advisories_repo", "repo_id"),
        sa.Index("ix_advisories_revision", "revision_id"),
        sa.Index("ix_advisories_modified", "modified"),
    )

    id: str = Field(primary_key=True, sa_type=sa.String(200))
    repo_id: int = Field(sa_column_args=[sa.ForeignKey("repos.id", ondelete="CASCADE")], nullable=False)
    revision_id: int = Field(sa_column_args=[sa.ForeignKey("revisions.id", ondelete="CASCADE")], nullable=False)
    osv: dict[str, Any] = Field(default_factory=dict, sa_type=sa.JSON)
    published: datetime = Field(sa_type=UTCDateTime)
    modified: datetime = Field(sa_type=UTCDateTime)
    withdrawn: datetime | None = _ts()


class AdvisoryEventRow(SQLModel, table=True):
    """One event of a GIT range of an advisory (introduced / fixed / last_affected / limit)."""

    __tablename__ = "advisory_events"
    __table_args__ = (
        sa.Index("ix_advisory_events_advisory", "advisory_id"),
        sa.Index("ix_advisory_events_value", "value"),
        sa.UniqueConstraint("advisory_id", "range_index", "ordinal", name="uq_advisory_events_position"),
    )

    id: int | None = Field(default=None, primary_key=True)
    advisory_id: str = Field(
        sa_type=sa.String(200),
        sa_column_args=[sa.ForeignKey("advisories.id", ondelete="CASCADE")],
        nullable=False,
    )
    range_index: int  # position of the range over all affected[] entries of the record
    ordinal: int
    event: str = Field(sa_type=sa.String(16))
    value: str = Field(sa_type=sa.Text)
    range_repo: str | None = Field(default=None, sa_type=sa.Text)


class AdvisoryKeyRow(SQLModel, table=True):
    """A (file, key) pair an advisory's changes name (`advise_match.record_keys`), as the digest
    `advisories.match_digest`, or `advisories.OPEN_MATCH` for a record without a `fixed` event: a
    later change can undo one of its entries only through such a pair, so a revision's advisories are
    planned against the open records and those sharing a pair with its changes, found per repo
    through one index, not every record of the repo decoded (migration 0014)."""

    __tablename__ = "advisory_keys"
    __table_args__ = (
        sa.Index("ix_advisory_keys_advisory", "advisory_id"),
        sa.Index("ix_advisory_keys_match", "repo_id", "match", "advisory_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    advisory_id: str = Field(
        sa_type=sa.String(200),
        sa_column_args=[sa.ForeignKey("advisories.id", ondelete="CASCADE")],
        nullable=False,
    )
    repo_id: int  # the advisory's (a record never moves repo: a merged repo's rows are deleted)
    match: str = Field(sa_type=sa.String(64))


class PollRunRow(SQLModel, table=True):
    """Telemetry: one poll of one repo (outcome, new revisions found, error)."""

    __tablename__ = "poll_runs"
    __table_args__ = (sa.Index("ix_poll_runs_repo_started", "repo_id", "started_at"),)

    id: int | None = Field(default=None, primary_key=True)
    repo_id: int = Field(sa_column_args=[sa.ForeignKey("repos.id", ondelete="CASCADE")], nullable=False)
    started_at: datetime = Field(sa_type=UTCDateTime)
    finished_at: datetime = Field(sa_type=UTCDateTime)
    outcome: str = Field(sa_type=sa.String(16))
    new_revisions: int = Field(default=0)
    error: str | None = Field(default=None, sa_type=sa.Text)


class PollCycleRow(SQLModel, table=True):
    """Telemetry: one poll cycle of one worker (requests by status, new revisions, failures, lag)."""

    __tablename__ = "poll_cycles"
    __table_args__ = (sa.Index("ix_poll_cycles_started", "started_at"),)

    id: int | None = Field(default=None, primary_key=True)
    worker: str = Field(sa_type=sa.String(200))
    started_at: datetime = Field(sa_type=UTCDateTime)
    finished_at: datetime = Field(sa_type=UTCDateTime)
    listing: str = Field(sa_type=sa.String(16))  # the models' listing: ok, busy (too many entries), failed, none
    datasets_listing: str = Field(default="none", sa_type=sa.String(16))  # the datasets' one, the same words
    repos: int = Field(default=0)
    new_revisions: int = Field(default=0)
    failures: int = Field(default=0)
    rate_limited: int = Field(default=0)
    requests_ok: int = Field(default=0)  # 1xx-2xx (rows before 0011: 3xx too)
    requests_3xx: int = Field(default=0)
    requests_4xx: int = Field(default=0)
    requests_429: int = Field(default=0)
    requests_5xx: int = Field(default=0)
    requests_failed: int = Field(default=0)  # sent, no answer
    lag_max_s: float | None = Field(default=None, sa_type=sa.Float)
    lag_mean_s: float | None = Field(default=None, sa_type=sa.Float)


class HistoryRewriteRow(SQLModel, table=True):
    """A force-push seen upstream: stored revisions no longer on the main branch, and its head then."""

    __tablename__ = "history_rewrites"
    __table_args__ = (
        sa.Index("ix_history_rewrites_repo", "repo_id", "id"),
        sa.UniqueConstraint("repo_id", "old_head", "new_head", name="uq_history_rewrites_repo_heads"),
    )

    id: int | None = Field(default=None, primary_key=True)
    repo_id: int = Field(sa_column_args=[sa.ForeignKey("repos.id", ondelete="CASCADE")], nullable=False)
    detected_at: datetime = Field(sa_type=UTCDateTime)
    old_head: str = Field(sa_type=sa.String(40))
    new_head: str = Field(sa_type=sa.String(40))
    dropped: list[str] = Field(default_factory=list, sa_type=sa.JSON)


class HistoryRestoreRow(SQLModel, table=True):
    """Commits a force-push dropped that upstream pushed back: the head moved onto them again (nothing new)."""

    __tablename__ = "history_restores"
    __table_args__ = (
        sa.Index("ix_history_restores_repo", "repo_id", "id"),
        sa.UniqueConstraint("repo_id", "old_head", "new_head", name="uq_history_restores_repo_heads"),
    )

    id: int | None = Field(default=None, primary_key=True)
    repo_id: int = Field(sa_column_args=[sa.ForeignKey("repos.id", ondelete="CASCADE")], nullable=False)
    detected_at: datetime = Field(sa_type=UTCDateTime)
    old_head: str = Field(sa_type=sa.String(40))
    new_head: str = Field(sa_type=sa.String(40))
    restored: list[str] = Field(default_factory=list, sa_type=sa.JSON)


class RepoAliasRow(SQLModel, table=True):
    """An id a repo was known by before a rename upstream (the hub answers 307 from it)."""

    __tablename__ = "repo_aliases"
    __table_args__ = (
        sa.UniqueConstraint("key", name="uq_repo_aliases_key"),
        sa.Index("ix_repo_aliases_repo", "repo_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    key: str = Field(sa_type=sa.String(202))  # the old id's RepoId.key (lowercased [datasets/]org/name)
    org: str = Field(sa_type=sa.String(96))
    name: str = Field(sa_type=sa.String(96))
    repo_id: int = Field(sa_column_args=[sa.ForeignKey("repos.id", ondelete="CASCADE")], nullable=False)
    renamed_to: str = Field(sa_type=sa.String(202))  # the id the rename went to ([datasets/]org/name as the hub spells it)
    renamed_at: datetime = Field(sa_type=UTCDateTime)


class StoreMetaRow(SQLModel, table=True):
    """A named value about the store itself (e.g. the advisory model its records were derived with)."""

    __tablename__ = "store_meta"

    key: str = Field(primary_key=True, sa_type=sa.String(64))
    value: str = Field(sa_type=sa.Text)


class NotifySubscriptionRow(SQLModel, table=True):
    """Where to tell someone about changes: an Apprise URL (or a signed webhook) and its filters."""

    __tablename__ = "notify_subscriptions"
    __table_args__ = (sa.CheckConstraint("digest IN ('daily', 'weekly')", name="ck_notify_subscriptions_digest"),)

    id: int | None = Field(default=None, primary_key=True)
    url: str = Field(sa_type=sa.Text)  # may hold credentials: never logged, shown redacted
    secret: str | None = Field(default=None, sa_type=sa.String(100))  # whsec_… for signed webhooks
    repos: list[str] = Field(default_factory=list, sa_type=sa.JSON)  # lowercased org/name keys; [] = any
    orgs: list[str] = Field(default_factory=list, sa_type=sa.JSON)  # lowercased orgs; [] = any
    kinds: list[str] = Field(default_factory=list, sa_type=sa.JSON)  # change kinds; [] = any
    min_severity: str | None = Field(default=None, sa_type=sa.String(16))
    pins_path: str | None = Field(default=None, sa_type=sa.Text)  # a code base scanned for pins
    pin_repos: list[str] = Field(default_factory=list, sa_type=sa.JSON)  # keys of the repos pinned there
    digest: str | None = Field(default=None, sa_type=sa.String(8))  # daily | weekly | None (at once)
    created_at: datetime = Field(sa_type=UTCDateTime)


class NotifyOutboxRow(SQLModel, table=True):
    """One message to deliver (the transactional outbox), written with the revision that causes it."""

    __tablename__ = "notify_outbox"
    __table_args__ = (
        sa.UniqueConstraint("key", name="uq_notify_outbox_key"),
        sa.CheckConstraint("state IN ('pending', 'sent', 'dead', 'skipped')", name="ck_notify_outbox_state"),
        sa.Index("ix_notify_outbox_due", "state", "due_at"),
        sa.Index("ix_notify_outbox_subscription_sent", "subscription_id", "sent_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    subscription_id: int = Field(
        sa_column_args=[sa.ForeignKey("notify_subscriptions.id", ondelete="CASCADE")], nullable=False
    )
    key: str = Field(sa_type=sa.String(300))  # idempotency key: one message per (subscription, revision)
    repo: str = Field(sa_type=sa.String(202))  # [datasets/]org/name as stored when enqueued
    sha: str | None = Field(default=None, sa_type=sa.String(40))
    payload: dict[str, Any] = Field(default_factory=dict, sa_type=sa.JSON)
    state: str = Field(default="pending", sa_type=sa.String(8))
    attempts: int = Field(default=0)
    due_at: datetime = Field(sa_type=UTCDateTime)  # the next attempt (a digest: the end of its period)
    lease_owner: str | None = Field(default=None, sa_type=sa.String(200))
    lease_expires_at: datetime | None = _ts()
    last_error: str | None = Field(default=None, sa_type=sa.Text)
    created_at: datetime = Field(sa_type=UTCDateTime)
    sent_at: datetime | None = _ts()
    # the delivered message this row went in (its webhook-id): rows grouped into one message share
    # it, so the rate limit counts messages, not rows (migration 0009)
    message_id: str | None = Field(default=None, sa_type=sa.String(64))


# Core views of the tables, for the query modules (plain SQLAlchemy Core statements).
REPOS: sa.Table = RepoRow.__table__  # type: ignore[attr-defined]
REVISIONS: sa.Table = RevisionRow.__table__  # type: ignore[attr-defined]
BLOBS: sa.Table = BlobRow.__table__  # type: ignore[attr-defined]
FILE_VERSIONS: sa.Table = FileVersionRow.__table__  # type: ignore[attr-defined]
CHANGES: sa.Table = ChangeRow.__table__  # type: ignore[attr-defined]
ESTIMATES: sa.Table = EstimateRow.__table__  # type: ignore[attr-defined]
ESTIMATE_BODIES: sa.Table = EstimateBodyRow.__table__  # type: ignore[attr-defined]
ADVISORIES: sa.Table = AdvisoryRow.__table__  # type: ignore[attr-defined]
ADVISORY_EVENTS: sa.Table = AdvisoryEventRow.__table__  # type: ignore[attr-defined]
ADVISORY_KEYS: sa.Table = AdvisoryKeyRow.__table__  # type: ignore[attr-defined]
POLL_RUNS: sa.Table = PollRunRow.__table__  # type: ignore[attr-defined]
HISTORY_REWRITES: sa.Table = HistoryRewriteRow.__table__  # type: ignore[attr-defined]
HISTORY_RESTORES: sa.Table = HistoryRestoreRow.__table__  # type: ignore[attr-defined]
POLL_CYCLES: sa.Table = PollCycleRow.__table__  # type: ignore[attr-defined]
STORE_META: sa.Table = StoreMetaRow.__table__  # type: ignore[attr-defined]
REPO_ALIASES: sa.Table = RepoAliasRow.__table__  # type: ignore[attr-defined]
NOTIFY_SUBSCRIPTIONS: sa.Table = NotifySubscriptionRow.__table__  # type: ignore[attr-defined]
NOTIFY_OUTBOX: sa.Table = NotifyOutboxRow.__table__  # type: ignore[attr-defined]
