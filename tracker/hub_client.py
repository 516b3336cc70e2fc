"""What the tracker asks of the hub: the `HubClient` protocol the scheduler, poller, pipeline and
derivative refresh are written against. `tracker.hub.HfHubClient` (huggingface_hub) is the real
implementation; tests may pass an in-memory one (tests/tracker/fake_hub.py). Every method raises
only `tracker.errors.HubError` and its subclasses."""

from __future__ import annotations

from collections.abc import Container, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from hubwatch.domain.records import RepoType

if TYPE_CHECKING:
    from hubwatch.domain.records import RepoId, RevisionRecord
    from hubwatch.domain.snapshot import Snapshot
    from hubwatch.tracker.guard import HubGuard
    from hubwatch.tracker.hub import RecentModel

__all__ = ["HubClient"]


class HubClient(Protocol):
    """A hub, as the tracker reads it."""

    guard: HubGuard  # the client's rate-limit window, deadlines and circuit (shared across workers)

    @property
    def endpoint(self) -> str:
        """The hub's base URL, no trailing slash."""
        ...

    @property
    def token(self) -> str | None:
        """The token the next request sends, if any."""
        ...

    def head_and_id(self, repo: RepoId, revision: str | None = None) -> tuple[str, RepoId]:
        """The head's commit sha and the id the hub answered for `repo` (a rename's new id)."""
        ...

    def commits(
        self, repo: RepoId, *, limit: int | None = None, since: Container[str] = frozenset()
    ) -> list[RevisionRecord]:
        """The main branch's commits oldest first: the newest `limit`, or down to the first in `since`."""
        ...

    def recently_modified(
        self, since: datetime, *, max_items: int = 10_000, repo_type: RepoType = RepoType.MODEL
    ) -> dict[RepoId, RecentModel] | None:
        """Repos of `repo_type` modified at or after `since` (the hub lists models and datasets
        apart); None when the listing holds more than `max_items`."""
        ...

    def derivatives(
        self, base: RepoId, relations: Sequence[str], *, limit: int | None = None
    ) -> list[tuple[RepoId, str]]:
        """The repos naming `base` as their base model, with the relation, at most `limit`."""
        ...

    def snapshot(self, repo: RepoId, sha: str, *, previous: Snapshot | None = None) -> Snapshot:
        """One revision's listing, tracked contents and safetensors headers."""
        ...

    def parquet_conversion(self, repo: RepoId, head: RevisionRecord, previous: bytes | None = None) -> bytes | None:
        """A dataset head's parquet conversion (`diff.dataset_parquet`'s document), or None; the
        footers of shards `previous` (the parent's document) read already are not read again."""
        ...
