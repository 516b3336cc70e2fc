"""Frozen values the store returns beyond storage/records.py: repo state, history entries, feed items."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hubwatch.domain.records import ChangeRecord, PollState, RepoId, RevisionRecord

__all__ = ["EstimatePoint", "FeedItem", "HistoryEntry", "HistoryRestore", "HistoryRewrite", "RepoRename", "RepoState"]


@dataclass(frozen=True)
class RepoState:
    """A tracked repo and how its polling stands."""

    repo: RepoId
    state: PollState
    last_error: str | None
    head_sha: str | None
    last_polled_at: datetime | None
    revision_count: int
    next_poll_at: datetime | None
    failures: int = 0  # consecutive polls that failed (error, gated, not found, disabled); reset by OK
    lease_owner: str | None = None
    lease_expires_at: datetime | None = None
    watched: bool = True


@dataclass(frozen=True)
class HistoryEntry:
    """One stored revision with what changed in it, its estimate and its advisories."""

    revision: RevisionRecord
    position: int  # 0 = oldest stored revision of the repo
    changes: list[ChangeRecord]
    estimate: dict[str, Any] | None
    estimator_version: str | None
    advisory_ids: list[str] = field(default_factory=list)
    repo: RepoId | None = None


@dataclass(frozen=True)
class EstimatePoint:
    """One revision in a repo's estimate series (the charts over the whole history): its place,
    sha and date, and its newest stored estimate JSON (None when it has none); no changes decoded."""

    position: int
    sha: str
    date: datetime
    estimate: dict[str, Any] | None


@dataclass(frozen=True)
class FeedItem:
    """A revision with its (matching) changes, for feeds; newest first in recent_changes()."""

    repo: RepoId
    revision: RevisionRecord
    changes: list[ChangeRecord]
    advisory_ids: list[str]
    origin: RepoId | None = None  # the id the store first knew the repo by (stable feed entry ids)


@dataclass(frozen=True)
class HistoryRewrite:
    """A force-push seen upstream: the head moved from `old_head` to `new_head`, and the stored
    revisions `dropped` are no longer on the main branch."""

    repo: RepoId
    old_head: str
    new_head: str
    dropped: tuple[str, ...]
    detected_at: datetime
    origin: RepoId | None = None  # the id the store first knew the repo by (stable feed entry ids)


@dataclass(frozen=True)
class HistoryRestore:
    """Upstream pushed back commits a force-push had dropped: the head moved from `old_head` onto the
    stored `new_head`, and the stored revisions `restored` are on the main branch again."""

    repo: RepoId
    old_head: str
    new_head: str
    restored: tuple[str, ...]
    detected_at: datetime
    origin: RepoId | None = None  # the id the store first knew the repo by (stable feed entry ids)


@dataclass(frozen=True)
class RepoRename:
    """A rename seen upstream: the hub answered `new` for `old` (which now redirects to it).
    `repo` is the repo's id now (a later rename may have moved it on from `new`)."""

    repo: RepoId
    old: RepoId
    new: RepoId
    renamed_at: datetime
    origin: RepoId | None = None
