"""An in-memory `tracker.hub_client.HubClient` for unit tests of the scheduler, poller and
derivative refresh: repos are lists of revisions with their files, held in dicts; no HTTP. End-to-end
tests keep using the emulator with the real client."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from hubwatch.domain.records import FileRecord, RepoId, RepoType, RevisionRecord
from hubwatch.domain.snapshot import Snapshot
from hubwatch.tracker.errors import HubUnavailable, RepoNotFound
from hubwatch.tracker.guard import HubGuard
from hubwatch.tracker.hub import RecentModel

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def sha_of(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


@dataclass
class FakeRepo:
    revisions: list[tuple[RevisionRecord, dict[str, bytes]]] = field(default_factory=list)
    modified: datetime = T0


class FakeHub:
    """The hub as dicts; `requests` counts the calls by method name (the poll cycle's threads too)."""

    endpoint = "https://fake-hub.invalid"
    token: str | None = None

    def __init__(self) -> None:
        self.guard = HubGuard(self.endpoint, timeout_s=1.0)
        self.repos: dict[RepoId, FakeRepo] = {}
        self.children: dict[RepoId, list[tuple[RepoId, str]]] = {}
        self.requests: dict[str, int] = {}
        self.failing: set[RepoType] = set()  # repo types whose recently-modified listing fails
        self.busy: set[RepoType] = set()  # repo types whose listing is too busy (more than max_items)
        self._count = threading.Lock()

    # -- building it ----------------------------------------------------------------------------

    def push(self, repo: RepoId, config: Mapping[str, object], title: str = "update", at: datetime | None = None) -> str:
        """A new commit on `repo`'s main branch holding `config.json`; its sha."""
        state = self.repos.setdefault(repo, FakeRepo())
        parent = state.revisions[-1][0].sha if state.revisions else None
        date = at or T0 + timedelta(hours=len(state.revisions))
        sha = sha_of(f"{repo}:{len(state.revisions)}:{title}")
        record = RevisionRecord(sha=sha, parent=parent, date=date, title=title)
        state.revisions.append((record, {"config.json": json.dumps(dict(config)).encode()}))
        state.modified = date
        return sha

    # -- the protocol ---------------------------------------------------------------------------

    def _asked(self, name: str, repo: RepoId | None = None) -> FakeRepo | None:
        with self._count:
            self.requests[name] = self.requests.get(name, 0) + 1
        if repo is None:
            return None
        state = self.repos.get(repo)
        if state is None or not state.revisions:
            raise RepoNotFound("no such repo", repo_id=str(repo))
        return state

    def head_and_id(self, repo: RepoId, revision: str | None = None) -> tuple[str, RepoId]:
        state = self._asked("head_and_id", repo)
        assert state is not None
        return state.revisions[-1][0].sha, repo

    def commits(
        self, repo: RepoId, *, limit: int | None = None, since: Container[str] = frozenset()
    ) -> list[RevisionRecord]:
        state = self._asked("commits", repo)
        assert state is not None
        records = [record for record, _ in state.revisions]
        for i in range(len(records) - 1, -1, -1):
            if records[i].sha in since:
                first = records[i]
                records = [RevisionRecord(first.sha, None, first.date, first.title), *records[i + 1:]]
                break
        return records[-limit:] if limit is not None else records

    def recently_modified(
        self, since: datetime, *, max_items: int = 10_000, repo_type: RepoType = RepoType.MODEL
    ) -> dict[RepoId, RecentModel] | None:
        """The listing of `repo_type`'s repos (counted as `recently_modified` for models, as
        `recently_modified:dataset` for datasets); `failing` and `busy` hold the types whose
        listing raises HubUnavailable or is too busy to reach back."""
        self._asked("recently_modified" if repo_type is RepoType.MODEL else f"recently_modified:{repo_type}")
        if repo_type in self.failing:
            raise HubUnavailable(f"the {repo_type} listing is down (FakeHub.failing)")
        found = {repo: RecentModel(repo, s.revisions[-1][0].sha, s.modified)
                 for repo, s in self.repos.items()
                 if repo.repo_type is repo_type and s.revisions and s.modified >= since}  # fmt: skip
        return None if len(found) > max_items or repo_type in self.busy else found

    def derivatives(
        self, base: RepoId, relations: Sequence[str], *, limit: int | None = None
    ) -> list[tuple[RepoId, str]]:
        self._asked("derivatives")
        found = [(repo, rel) for repo, rel in self.children.get(base, []) if rel in relations]
        return found[:limit] if limit is not None else found

    def snapshot(self, repo: RepoId, sha: str, *, previous: Snapshot | None = None) -> Snapshot:
        state = self._asked("snapshot", repo)
        assert state is not None
        contents = next(files for record, files in state.revisions if record.sha == sha)
        listing = {path: FileRecord(path, len(raw), sha_of(raw.decode())) for path, raw in contents.items()}
        return Snapshot(sha=sha, files=listing, contents=dict(contents))

    def parquet_conversion(self, repo: RepoId, head: RevisionRecord, previous: bytes | None = None) -> bytes | None:
        """The fake hub converts nothing: no dataset of it has a `refs/convert/parquet` branch."""
        return None
