"""The emulator's live state: which revisions of each repo are visible, revision lookup, advance/reset."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from hubwatch.hubsim.faults import FaultConfig, Faults
from hubwatch.hubsim.repos import Commit, RepoHistory

__all__ = ["Advance", "SimError", "SimState", "parse_at"]

_HEX = re.compile(r"[0-9a-f]{4,40}")
MAIN_REFS = ("main", "refs/heads/main")


class SimError(Exception):
    """An answer the hub gives as an error: HTTP status, X-Error-Code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def parse_at(at: str | int | None) -> int | None:
    """`--at v3`, `3` or None (all versions) → the highest version number shown at start."""
    if at is None or isinstance(at, int):
        if isinstance(at, int) and at < 0:
            raise ValueError(f"--at must not be negative, got {at}")
        return at
    text = at.strip().lower().removeprefix("v")
    if not text.isdigit():
        raise ValueError(f"--at expects vK or K (a version number), got {at!r}")
    return int(text)


@dataclass(frozen=True)
class Advance:
    """The result of revealing one more version of a repo."""

    repo_id: str
    old_sha: str | None
    commit: Commit
    visible: int
    total: int


class SimState:
    """Repos plus how many of each one's versions are visible; safe to share between threads."""

    def __init__(
        self,
        repos: dict[str, RepoHistory],
        *,
        at: int | None = None,
        faults: FaultConfig | None = None,
        page_size: int | None = None,
        on_advance: Callable[[Advance], None] | None = None,
    ) -> None:
        self.repos = repos
        self.start_at = at
        self.page_size = page_size
        self.start_faults = faults or FaultConfig()
        self.faults = Faults(self.start_faults)
        self.on_advance = on_advance
        self._lock = threading.Lock()
        self._at = at
        self._visible: dict[str, int] = {}
        self._advanced_at: dict[str, datetime] = {}
        self.reset(at)

    def reset(self, at: int | None = None, *, faults: bool = True) -> None:
        """Back to the start: versions ≤ `at` visible (all when None); faults to the start ones."""
        with self._lock:
            self._at = at
            self._visible = {
                rid: sum(1 for c in h.commits if at is None or c.number <= at) for rid, h in self.repos.items()
            }
            self._advanced_at.clear()
        if faults:
            self.faults.set(self.start_faults)

    def history(self, repo_id: str) -> RepoHistory:
        """The repo, or RepoNotFound (also while none of its versions is visible yet)."""
        repo = self.repos.get(repo_id)
        if repo is None or self.visible_count(repo_id) == 0:
            raise SimError(404, "RepoNotFound", f"Repository not found: {repo_id}")
        return repo

    def visible_count(self, repo_id: str) -> int:
        with self._lock:
            return self._visible.get(repo_id, 0)

    def commits(self, repo_id: str) -> tuple[Commit, ...]:
        """The visible commits, oldest first."""
        repo = self.history(repo_id)
        return repo.commits[: self.visible_count(repo_id)]

    def head(self, repo_id: str) -> Commit:
        return self.commits(repo_id)[-1]

    def last_modified(self, repo_id: str) -> datetime:
        """The head's date, or the wall-clock time of the latest live advance when that is later."""
        head = self.head(repo_id).date
        with self._lock:
            advanced = self._advanced_at.get(repo_id)
        return max(head, advanced) if advanced else head

    def resolve(self, repo_id: str, revision: str) -> Commit:
        """A branch name (`main`), a full sha or a unique prefix (≥ 4 hex) of a visible commit."""
        commits = self.commits(repo_id)
        if revision in MAIN_REFS:
            return commits[-1]
        rev = revision.lower()
        if _HEX.fullmatch(rev):
            found = [c for c in commits if c.sha.startswith(rev)]
            if len(found) == 1:
                return found[0]
        raise SimError(404, "RevisionNotFound", f"Invalid rev id: {revision}")

    def advance(self, repo_id: str) -> Advance:
        """Reveal the next version; SimError 409 when every version is already visible."""
        repo = self.repos.get(repo_id)
        if repo is None:
            raise SimError(404, "RepoNotFound", f"Repository not found: {repo_id}")
        with self._lock:
            shown = self._visible[repo_id]
            if shown >= len(repo.commits):
                raise SimError(
                    409, "Conflict", f"{repo_id} already shows its last version ({repo.commits[-1].version})"
                )
            self._visible[repo_id] = shown + 1
            self._advanced_at[repo_id] = datetime.now(UTC)
        result = Advance(
            repo_id, repo.commits[shown - 1].sha if shown else None, repo.commits[shown], shown + 1, len(repo.commits)
        )
        if self.on_advance is not None:
            self.on_advance(result)
        return result

    def snapshot(self) -> dict[str, object]:
        """What `/_sim/state` reports: per repo the versions shown and the head."""
        with self._lock:
            visible = dict(self._visible)
        repos: dict[str, object] = {}
        for rid, h in self.repos.items():
            n = visible.get(rid, 0)
            repos[rid] = {
                "visible": n,
                "total": len(h.commits),
                "version": h.commits[n - 1].version if n else None,
                "sha": h.commits[n - 1].sha if n else None,
                "gated": h.gated_token is not None,
            }
        return {"at": self._at, "repos": repos, "faults": self.faults.config.to_json()}
