"""The emulator's live state: which revisions of each repo are visible, revision lookup (branches, tags,
`refs/pr/N`, HEAD), ids matched case-insensitively, renames (the old id answers 307), force-pushes
(rewind, squash), advance/reset. Repos are keyed `org/name` (models) and `datasets/org/name` (datasets)."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from hubwatch.hubsim.faults import FaultConfig, Faults
from hubwatch.hubsim.repos import DATASETS_FOLDER, PARQUET_REF, Commit, RepoHistory

__all__ = ["Advance", "Moved", "SimError", "SimState", "parse_at"]

_HEX = re.compile(r"[0-9a-f]{4,40}")
MAIN_REFS = ("main", "refs/heads/main", "HEAD")
REF_KINDS = {"branch": "refs/heads/", "tag": "refs/tags/", "pr": "refs/pr/"}


class SimError(Exception):
    """An answer the hub gives as an error: HTTP status, X-Error-Code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class Moved(SimError):
    """A renamed repo's old id: the hub answers 307 with the same path under the new id."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__(307, "RepoMoved", f"Repository {old} was renamed to {new}")
        self.old = old
        self.new = new


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
        conversion_lag: bool = False,
    ) -> None:
        self.repos = repos
        self.start_at = at
        self.page_size = page_size
        self.start_faults = faults or FaultConfig()
        self.faults = Faults(self.start_faults)
        self.on_advance = on_advance
        # A busy hub: this many synthetic models (in the listing only) modified at that time; and as
        # many synthetic datasets in the datasets listing.
        self.busy_listing: tuple[int, datetime] | None = None
        self.busy_datasets_listing: tuple[int, datetime] | None = None
        # Conversion lag: no dataset version is converted (its parquet conversion is not out), from
        # the start and as `advance` reveals them, until `convert` runs the converter on the dataset,
        # as the hub's converter runs some minutes after main moves. Off: converted once revealed.
        self.conversion_lag = conversion_lag
        self._converted: dict[str, int] = {}  # repo id → the newest version number the converter reached
        self._lock = threading.Lock()
        self._at = at
        self._visible: dict[str, int] = {}
        self._advanced_at: dict[str, datetime] = {}
        self._refs: dict[str, dict[str, Commit]] = {}  # repo id → full ref name → commit
        self._moved: dict[str, str] = {}  # a renamed id, lowercased → the id it now is
        self._squashed: dict[str, RepoHistory] = {}  # repo id → its history before the first squash
        self._squashes = 0  # squashes so far: each one's commit gets a sha of its own
        self.reset(at)

    def reset(self, at: int | None = None, *, faults: bool = True) -> None:
        """Back to the start: versions ≤ `at` visible (all when None); faults to the start ones."""
        with self._lock:
            self._at = at
            self.repos.update(self._squashed)  # squashed histories come back whole
            self._squashed.clear()
            self._visible = {
                rid: sum(1 for c in h.commits if at is None or c.number <= at) for rid, h in self.repos.items()
            }
            self._advanced_at.clear()
            self._refs.clear()
            self._converted = {
                rid: 0 if self.conversion_lag else max((c.number for c in h.commits[: self._visible[rid]]), default=0)
                for rid, h in self.repos.items()
            }
        if faults:
            self.faults.set(self.start_faults)

    def canonical(self, repo_id: str, *, follow: bool = False) -> str:
        """The id as the emulator spells it, matched case-insensitively (as the hub does); a renamed
        id raises Moved (or, with `follow`, gives the new id); unknown ids are returned as given."""
        if repo_id in self.repos:
            return repo_id
        key = repo_id.lower()
        with self._lock:
            found = next((rid for rid in self.repos if rid.lower() == key), None)
            moved = self._moved.get(key)
        if found is not None:
            return found
        if moved is not None:
            if follow:
                return moved
            raise Moved(repo_id, moved)
        return repo_id

    def rename(self, old: str, new: str) -> str:
        """Rename a repo (history, refs and visibility move with it); `old` then answers 307. A
        dataset (`datasets/org/name`) is renamed to `org2/name2` or `datasets/org2/name2` alike."""
        old = self.canonical(old, follow=True)
        if old not in self.repos:
            raise SimError(404, "RepoNotFound", f"Repository not found: {old}")
        dataset = self.repos[old].repo_type == "dataset"
        bare = new.removeprefix(f"{DATASETS_FOLDER}/") if dataset else new
        org, sep, name = bare.partition("/")
        if not sep or not org or not name or "/" in name:
            raise SimError(400, "BadRequest", f"rename target must be org/name, got {new!r}")
        new = f"{DATASETS_FOLDER}/{bare}" if dataset else bare
        with self._lock:
            if any(rid.lower() == new.lower() for rid in self.repos if rid != old):
                raise SimError(409, "Conflict", f"{new} already exists")
            self.repos[new] = replace(self.repos.pop(old), repo_id=bare)
            self._visible[new] = self._visible.pop(old, 0)
            if old in self._advanced_at:
                self._advanced_at[new] = self._advanced_at.pop(old)
            if old in self._refs:
                self._refs[new] = self._refs.pop(old)
            if old in self._squashed:
                self._squashed[new] = replace(self._squashed.pop(old), repo_id=bare)
            self._moved = {k: (new if v == old else v) for k, v in self._moved.items() if k != new.lower()}
            if old.lower() != new.lower():
                self._moved[old.lower()] = new
        return new

    def rewind(self, repo_id: str, to: str | int) -> Commit:
        """Force-push main back to version `to` (the versions after it leave main; `advance` pushes
        them back one at a time); returns the new head."""
        repo_id = self.canonical(repo_id, follow=True)
        repo = self.history(repo_id)
        try:
            number = parse_at(to)
        except ValueError as exc:
            raise SimError(400, "BadRequest", str(exc)) from exc
        shown = self.commits(repo_id)
        kept = [c for c in shown if number is not None and c.number <= number]
        if not kept or len(kept) == len(shown):
            raise SimError(409, "Conflict", f"{repo_id} shows {shown[0].version}..{shown[-1].version}: "
                                             f"rewind to a version before its head ({to!r} is not)")
        with self._lock:
            self._visible[repo.key] = len(kept)
            self._advanced_at[repo.key] = datetime.now(UTC)
        self._pushed(repo.key, shown[-1].sha, kept[-1])
        return kept[-1]

    def squash(self, repo_id: str, at: datetime | None = None) -> Commit:
        """`HfApi.super_squash_history` on main: the visible history becomes one commit without a
        parent holding the head's files (a new sha); versions not revealed yet follow it, as new
        commits (new shas). Returns it."""
        repo_id = self.canonical(repo_id, follow=True)
        repo = self.history(repo_id)
        shown = self.commits(repo_id)
        head = shown[-1]
        when = at or datetime.now(UTC)
        with self._lock:
            self._squashes += 1
            count = self._squashes
        digest = hashlib.sha1(f"{repo.key}\nsquash {count}\n{head.sha}\n".encode())
        squashed = Commit(digest.hexdigest(), head.version, head.number, when,
                          "Super-squash branch 'main' using huggingface_hub", "", head.files)
        # The versions still to come land on the new base: new commits, so new shas.
        later = tuple(replace(c, sha=hashlib.sha1(f"{c.sha}\nafter squash {count}\n".encode()).hexdigest())
                      for c in repo.commits[len(shown):])
        with self._lock:
            self._squashed.setdefault(repo.key, repo)
            self.repos[repo.key] = replace(repo, commits=(squashed, *later))
            self._visible[repo.key] = 1
            self._advanced_at[repo.key] = when
        self._pushed(repo.key, head.sha, squashed)
        return squashed

    def _pushed(self, repo_id: str, old_sha: str, head: Commit) -> None:
        """Tell `on_advance` (the webhook sender) that main moved to `head` by a force-push."""
        if self.on_advance is not None:
            self.on_advance(Advance(repo_id, old_sha, head, self.visible_count(repo_id), len(self.repos[repo_id].commits)))

    def set_ref(self, repo_id: str, kind: str, name: str, version: str | int) -> tuple[str, Commit]:
        """Point a branch, tag or `refs/pr/N` at a version of the repo (any, even one main does not
        show yet: a pull request's commit); returns the full ref name and the commit."""
        repo = self.repos.get(self.canonical(repo_id, follow=True))
        if repo is None:
            raise SimError(404, "RepoNotFound", f"Repository not found: {repo_id}")
        if kind not in REF_KINDS or not name or (kind == "pr" and not name.isdigit()):
            raise SimError(400, "BadRequest", f"a ref is branch, tag or pr (a number) with a name, got {kind}={name!r}")
        try:
            number = parse_at(version)
        except ValueError as exc:
            raise SimError(400, "BadRequest", str(exc)) from exc
        commit = next((c for c in repo.commits if c.number == number), None)
        if commit is None:
            raise SimError(404, "RevisionNotFound", f"{repo.key} has no version v{number}")
        ref = REF_KINDS[kind] + name
        with self._lock:
            self._refs.setdefault(repo.key, {})[ref] = commit
        return ref, commit

    def refs(self, repo_id: str) -> dict[str, Commit]:
        """The repo's refs besides main: full ref name → commit."""
        with self._lock:
            return dict(self._refs.get(repo_id, {}))

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

    def converts(self, repo_id: str) -> tuple[Commit, ...]:
        """A dataset's parquet conversion commits that are out: those of the versions up to main's
        head that the converter reached (all of them unless `conversion_lag`)."""
        head = self.head(repo_id)
        with self._lock:
            reached = self._converted.get(repo_id, head.number)
        return tuple(c for c in self.history(repo_id).converts if c.number <= min(head.number, reached))

    def convert(self, repo_id: str) -> Commit | None:
        """Run the converter on a dataset: main's head is converted now (what `conversion_lag` held
        back comes out). Its conversion commit, or None when that version has none (no `PARQUET/vN/`)."""
        head = self.head(repo_id)
        with self._lock:
            self._converted[repo_id] = max(self._converted.get(repo_id, 0), head.number)
        return next((c for c in self.history(repo_id).converts if c.number == head.number), None)

    def lineage(self, repo_id: str, commit: Commit) -> tuple[Commit, ...]:
        """The history that ends at `commit`, oldest first: main's (every version, as a ref may point
        past what main shows), or the parquet branch's for one of its commits."""
        repo = self.history(repo_id)
        line = repo.converts if commit in repo.converts else repo.commits
        return line[: line.index(commit) + 1]

    def last_modified(self, repo_id: str) -> datetime:
        """The head's date, or the wall-clock time of the latest live advance when that is later."""
        head = self.head(repo_id).date
        with self._lock:
            advanced = self._advanced_at.get(repo_id)
        return max(head, advanced) if advanced else head

    def resolve(self, repo_id: str, revision: str) -> Commit:
        """`main` (or `HEAD`), a branch, tag or `refs/pr/N` (full name or short), a dataset's
        `refs/convert/parquet`, a full sha or a unique prefix (≥ 4 hex) of a visible commit or of
        one a ref points at."""
        commits = self.commits(repo_id)
        if revision in MAIN_REFS:
            return commits[-1]
        refs = self.refs(repo_id)
        converts = self.converts(repo_id)
        if converts:
            refs[PARQUET_REF] = converts[-1]
        for name in (revision, f"refs/heads/{revision}", f"refs/tags/{revision}"):
            if name in refs:
                return refs[name]
        rev = revision.lower()
        if _HEX.fullmatch(rev):
            reachable = {c.sha: c for c in (*commits, *converts, *refs.values())}
            found = [c for sha, c in reachable.items() if sha.startswith(rev)]
            if len(found) == 1:
                return found[0]
        raise SimError(404, "RevisionNotFound", f"Invalid rev id: {revision}")

    def advance(self, repo_id: str, at: datetime | None = None) -> Advance:
        """Reveal the next version (listed as modified `at`, default now: emulated time for benchmarks);
        SimError 409 when every version is already visible."""
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
            self._advanced_at[repo_id] = at or datetime.now(UTC)
            if not self.conversion_lag:
                self._converted[repo_id] = max(self._converted.get(repo_id, 0), repo.commits[shown].number)
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
                "type": h.repo_type,
            }
        return {"at": self._at, "repos": repos, "faults": self.faults.config.to_json()}
