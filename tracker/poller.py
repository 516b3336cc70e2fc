"""Polls watched repos: detects new commits and runs each through the pipeline, in order.

A poll of one repo returns a value, never raises for hub trouble: `Unchanged`, `NewRevisions`
or `Failed` (with the state recorded in the store: gated, not found, error).
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from hubwatch.diff.dataset_parquet import CONVERSION_PATH, with_conversion
from hubwatch.domain.clock import Clock, system_clock
from hubwatch.domain.records import AdvisoryRecord, PollState, RepoId, RevisionRecord
from hubwatch.domain.snapshot import Snapshot
from hubwatch.tracker.errors import (GatedRepo, HubError, InvalidContent, RateLimited, RepoDisabled, RepoNotFound,
                                     RevisionNotFound, TokenRejected)
from hubwatch.tracker.guard import end_poll_deadline, start_poll_deadline
from hubwatch.tracker.hubstate import StoreWindow, clear_token_problem, record_token_problem
from hubwatch.tracker.pipeline import ProcessedRevision, history_rewrite_change, load_baseline, process_revision
from hubwatch.tracker.rewound import after_head_move, after_rewrite, settle_off_main_line

if TYPE_CHECKING:
    from hubwatch.settings import Settings
    from hubwatch.storage import Store
    from hubwatch.tracker.hub_client import HubClient

log = logging.getLogger(__name__)

__all__ = [
    "Failed",
    "NewRevisions",
    "PollOutcome",
    "Unchanged",
    "backoff_delay",
    "failed",
    "next_poll_at",
    "poll_repo",
    "poll_repos",
]


@dataclass(frozen=True)
class Unchanged:
    repo: RepoId
    head: str
    rewritten: tuple[str, ...] = ()  # a force-push back to a stored revision dropped these
    renamed_from: RepoId | None = None  # the hub answered this poll's id under a new one
    # A dataset head still waiting for its parquet conversion: when to ask its refs again (None: not waiting).
    conversion_due: datetime | None = None


@dataclass(frozen=True)
class NewRevisions:
    repo: RepoId
    shas: tuple[str, ...]  # stored by this poll, oldest first
    renamed_from: RepoId | None = None  # the hub answered this poll's id under a new one
    # The dataset head stored without its parquet conversion (not out yet): when to ask again.
    conversion_due: datetime | None = None


@dataclass(frozen=True)
class Failed:
    repo: RepoId
    reason: str  # one line naming the repo (and revision/file where known)
    state: PollState  # the recorded state: GATED, NOT_FOUND or ERROR
    fix: str
    saved: tuple[str, ...] = ()  # revisions stored before the failure
    retry_after: float | None = None
    token_rejected: bool = False  # the hub rejected the token: a hub-wide failure, not this repo's
    # The hub's rate limit (a 429, or its window known spent) put the poll off: not the repo's
    # failure. Nothing is recorded on the repo (state, error and failure count stay as they were).
    deferred: bool = False


PollOutcome = Unchanged | NewRevisions | Failed
Progress = Callable[[RepoId, str], None]


def _state_of(exc: HubError) -> PollState:
    if isinstance(exc, GatedRepo):
        return PollState.GATED
    if isinstance(exc, RepoNotFound):
        return PollState.NOT_FOUND
    if isinstance(exc, RepoDisabled):
        return PollState.DISABLED
    return PollState.ERROR


def backoff_delay(failures: int, settings: Settings, retry_after: float | None = None) -> float:
    """Seconds to wait before polling a repo again after `failures` consecutive failures."""
    if failures <= 0:
        return float(settings.poll_interval_s)
    delay = min(settings.poll_interval_s * 2 ** (failures - 1), 24 * 3600)
    return float(max(delay, retry_after or 0.0))


def poll_repo(
    repo: RepoId,
    *,
    hub: HubClient,
    store: Store,
    settings: Settings,
    progress: Progress | None = None,
    now: Clock = system_clock,
    stop: Callable[[], bool] | None = None,
) -> PollOutcome:
    """Poll one repo: one request when its head has not moved, else every new commit in order.

    `stop` (a shutdown) is asked before each revision: when it says so the poll ends there, with
    what it stored so far and no failure (the next poll resumes at the next revision).

    All of its hub requests share one deadline (`poll_deadline_s`). A rejected token is recorded
    hub-wide (`tracker.hubstate`), not on the repo: the repo's state and backoff stay as they were.
    """
    saved: list[str] = []
    renamed_from: RepoId | None = None
    started = now()
    say = progress or (lambda _repo, _text: None)
    deadline = start_poll_deadline(settings.poll_deadline_s)
    try:
        stored_head = store.head(repo)
        head, answered = hub.head_and_id(repo)
        clear_token_problem(store)  # the hub took this token: a rejection recorded before is over
        if str(answered) != str(repo):
            # Renamed upstream (or spelled otherwise): one repo, carried on under the hub's id.
            renamed_from = repo if store.repos.rename_repo(repo, answered, now()) else None
            repo = answered
            if renamed_from is not None:
                _republish_renamed(store, repo, settings, now)
            stored_head = store.head(repo)  # the rename may have merged two stored rows: the survivor's
        if stored_head is not None and stored_head.sha == head:
            waiting = _late_conversion(hub, store, repo, stored_head, settings, now) if repo.is_dataset else None
            store.repos.record_poll(repo, PollState.OK, None, now(), started=started)
            return Unchanged(repo, head, renamed_from=renamed_from, conversion_due=waiting)
        first_time = stored_head is None
        stored = _StoredShas(store, repo, stored_head)
        commits = hub.commits(repo, limit=settings.backfill_limit if first_time else None, since=stored)
        upstream = {c.sha for c in commits}
        if stored_head is not None and (not commits or commits[0].sha != stored_head.sha):
            # The listing did not stop at the stored head (a force-push, or a head stored out of
            # line): upstream's history is what it listed and, below the stored commit it stopped
            # at, that commit's stored ancestors; read whole only when the store cannot tell.
            below = _upstream_below(store, repo, commits, stored)
            if below is None:
                commits = hub.commits(repo)
                upstream = {c.sha for c in commits}
            else:
                upstream |= below
        # Of what the listing names (and the head), what is stored: the lookups of those alone.
        known = stored.among([*upstream, head])
        extra = []
        dropped: list[str] = []
        if stored_head is not None and stored_head.sha not in upstream:
            # Force-push: what was stored is no longer the main branch's history.
            dropped = [sha for sha in store.revisions.ordered_shas(repo) if sha not in upstream]
            extra = [history_rewrite_change(dropped)] if dropped else []
            if dropped and stored_head is not None:
                # Updates raised at the dropped commits are withdrawn in the same transaction.
                at = now()
                store.revisions.record_rewrite(repo, stored_head.sha, head, dropped, at, after_rewrite(store, repo, dropped, at))
        new = [c for c in commits if c.sha not in known]
        if not new and not dropped and head in known:
            # Upstream is back on commits stored before (a push restored them): their updates return.
            at = now()
            store.revisions.move_head(repo, head, at, after_head_move(store, repo, head, at))
        baseline_sha = new[0].parent if new and new[0].parent in known else None
        if baseline_sha is None and extra and stored_head is not None:
            baseline_sha = stored_head.sha  # compare the rewritten history with what users had
        baseline = load_baseline(store, repo, baseline_sha)
        advisories = _KnownAdvisories(store, repo, none_stored=first_time)
        due: datetime | None = None
        with _Ahead(hub, repo) as ahead:
            for index, revision in enumerate(new, start=1):
                if stop is not None and stop():
                    break
                say(repo, f"{index}/{len(new)} {revision.sha[:12]} {revision.title[:50]}")
                # This revision's snapshot (fetched while the one before was processed), and the
                # next one's fetch started before this one is diffed, estimated and stored.
                snapshot = ahead.take(revision, baseline.snapshot)
                ahead.start(new[index] if index < len(new) else None, snapshot)
                if repo.is_dataset and index == len(new) and revision.sha == head:
                    snapshot = _with_conversion(hub, repo, revision, snapshot, baseline.snapshot)
                    if CONVERSION_PATH not in snapshot.files:
                        due = _conversion_due(revision, now(), settings)
                result = process_revision(
                    repo, revision, baseline, hub=hub, store=store, settings=settings,
                    extra_changes=extra if index == 1 else (), snapshot=snapshot,
                    prior=advisories.records, id_repo=advisories.first_id,
                )
                advisories.saved(result)
                if result.saved:
                    saved.append(revision.sha)
                baseline = result.baseline
        if saved and stored_head is not None and new and new[0].parent != stored_head.sha and new[0].parent in known:
            settle_off_main_line(store, repo, now())  # new commits on a dropped one: it is back on the line
        store.repos.record_poll(repo, PollState.OK, None, now(), started=started, new_revisions=len(saved))
        # A push that only removed commits stores nothing new: the recorded rewrite is the change.
        if saved:
            return NewRevisions(repo, tuple(saved), renamed_from, due if saved[-1] == head else None)
        return Unchanged(repo, head, tuple(dropped), renamed_from)
    except TokenRejected as exc:
        record_token_problem(store, hub.token, "the hub rejected the token (401 invalid credentials)", exc.fix, now())
        reason = str(exc) if str(exc).startswith(str(repo)) else f"{repo}: {exc}"
        return Failed(repo, reason, PollState.ERROR, exc.fix, tuple(saved), None, token_rejected=True)
    except RateLimited as exc:
        reason = str(exc) if str(exc).startswith(str(repo)) else f"{repo}: {exc}"
        recorded = store.repo_state(repo)
        state = recorded.state if recorded is not None else PollState.NEW
        return Failed(repo, reason, state, exc.fix, tuple(saved), exc.retry_after, deferred=True)
    except HubError as exc:
        state = _state_of(exc)
        reason = str(exc) if str(exc).startswith(str(repo)) else f"{repo}: {exc}"
        store.repos.record_poll(repo, state, reason, now(), started=started, new_revisions=len(saved))
        return Failed(repo, reason, state, exc.fix, tuple(saved))
    finally:
        end_poll_deadline(deadline)


def _upstream_below(
    store: Store, repo: RepoId, commits: Sequence[RevisionRecord], stored: _StoredShas
) -> set[str] | None:
    """What upstream's history holds below `commits`, a newest-first listing (oldest first here)
    that did not end at the stored head: read from the store, not the hub.

    When the listing met no stored commit it reached the root: it is the whole history, nothing
    lies below. When it stopped at a stored commit (the fork point of a force-push, or a head
    pushed back to), what lies below is that commit's ancestry, which a commit keeps whatever is
    pushed after it: its stored ancestors. None (the hub is asked for everything) when nothing was
    listed or the store holds no line to that commit.
    """
    if not commits:
        return None
    oldest = commits[0].sha
    if oldest not in stored:
        return set()
    line = store.revisions.revision_shas(repo, oldest)
    return set(line) if line else None


def _with_conversion(hub: HubClient, repo: RepoId, head: RevisionRecord, snapshot: Snapshot, parent: Snapshot) -> Snapshot:
    """A dataset head's snapshot with its parquet conversion kept, when the hub has one of this head
    (`tracker.hub_parquet`; the footers the parent's kept conversion read of the same shards are
    reused). A conversion that cannot be read (a tree past the bounds, the branch gone between two
    requests) is left out with a warning and the head stored without it; any other hub failure
    fails the poll as any request's does (the next poll asks again)."""
    try:
        document = hub.parquet_conversion(repo, head, parent.contents.get(CONVERSION_PATH))
    except (InvalidContent, RevisionNotFound) as exc:
        log.warning("%s: stored %s without its parquet conversion: %s", repo, head.sha[:12], exc)
        return snapshot
    return snapshot if document is None else with_conversion(snapshot, document)


def _conversion_due(head: RevisionRecord, at: datetime, settings: Settings) -> datetime | None:
    """When to ask again for the parquet conversion of a dataset head kept without one: the wait
    between two asks is half the head's age (at least `conversion_recheck_s`), so asks thin out as
    a conversion grows unlikely; None when that ask would come after `conversion_wait_s` from the
    head's commit (the wait is over)."""
    age = (at - head.date).total_seconds()
    wait = max(float(settings.conversion_recheck_s), age / 2)
    return None if age + wait > settings.conversion_wait_s else at + timedelta(seconds=wait)


def _late_conversion(
    hub: HubClient, store: Store, repo: RepoId, head: RevisionRecord, settings: Settings, now: Clock
) -> datetime | None:
    """On a poll that found a dataset's head unchanged: when the head was kept without its parquet
    conversion and is young enough to get one (`_conversion_due`), ask the hub (its refs: one
    request while the conversion is not out) and, when the conversion is out now, add it to the
    stored revision (`store.revisions.add_file`, which raises the history version: pages, facts and
    cost panels read it from then on). Where it changes what the head's changes say (a card stating
    no sizes: its splits and rows come from the conversion), the repo is re-derived with it, the
    conversion added in the same transaction as the results, so the rows the test split gained are
    advised as if the conversion had been out when the head was polled.

    Returns when to ask again (still waiting), or None (kept now, past the wait, or unreadable)."""
    at = now()
    if (at - head.date).total_seconds() > settings.conversion_wait_s:
        return None
    if store.revisions.stored_file(repo, head.sha, CONVERSION_PATH) is not None:
        return None  # kept already (by the poll that stored the head, or an earlier late one)
    parent = store.revisions.stored_file(repo, head.parent, CONVERSION_PATH) if head.parent else None
    try:
        document = hub.parquet_conversion(repo, head, parent)
    except (InvalidContent, RevisionNotFound) as exc:
        log.warning("%s: %s kept without its parquet conversion: %s", repo, head.sha[:12], exc)
        return None
    if document is None:
        return _conversion_due(head, at, settings)
    from hubwatch.domain.files import FileRecord

    record = FileRecord(CONVERSION_PATH, len(document), None, None)
    current = with_conversion(load_baseline(store, repo, head.sha).snapshot, document)
    if _changes_moved(store, repo, head, current):
        from hubwatch.tracker.rederive import rederive_repo

        # The conversion is added in the transaction that writes what it changes: a crash leaves neither.
        result = rederive_repo(store, repo, settings, now, adding={head.sha: (record, document)})
        log.info("%s: %s got its parquet conversion late; %d revisions re-classified, %d advisories written",
                 repo, head.sha[:12], result.revisions, len(result.records))  # fmt: skip
    else:
        store.revisions.add_file(repo, head.sha, record, document)
    return None


def _changes_moved(store: Store, repo: RepoId, head: RevisionRecord, current: Snapshot) -> bool:
    """Whether the head's changes, diffed again as `current` (with its conversion), differ from those stored."""
    from hubwatch.diff import diff_repo_snapshots
    from hubwatch.tracker.rederive import same_changes

    entry = store.revision(repo, head.sha)
    if entry is None:
        return False
    parent = load_baseline(store, repo, head.parent).snapshot if head.parent else None
    if parent is not None and not parent.files:
        parent = None  # a parent not stored: the head was diffed as the first known revision
    # What the diff says, less what the poll adds beside it (a force-push's record, the estimate's move).
    stored = [c for c in entry.changes if c.path != "estimate" and not c.detail.get("history_rewrite")]
    return not same_changes(diff_repo_snapshots(repo.repo_type, parent, current), stored)


class _StoredShas:
    """Which commits the store holds, asked commit by commit as the listing goes (it stops at the
    first stored one: the stored head, on a poll that finds a few new commits), each sha looked up
    once; after `_LOOKUPS` commits not stored (a long listing: many new commits, a force-push) the
    repo's shas are read at once instead. A poll's reads then grow with what is new upstream, not
    with the repo's history."""

    _LOOKUPS = 64

    def __init__(self, store: Store, repo: RepoId, head: RevisionRecord | None) -> None:
        self._store = store
        self._repo = repo
        self._held: set[str] = set() if head is None else {head.sha}
        self._absent: set[str] = set()
        self._all: set[str] | None = None if head is not None else set()

    def __contains__(self, sha: object) -> bool:
        if not isinstance(sha, str):
            return False
        if self._all is not None:
            return sha in self._all
        if sha in self._held:
            return True
        if sha in self._absent:
            return False
        if len(self._absent) >= self._LOOKUPS:
            self._all = self._store.revisions.known_shas(self._repo)
            return sha in self._all
        held = bool(self._store.revisions.stored_among(self._repo, [sha]))
        (self._held if held else self._absent).add(sha)
        return held

    def among(self, shas: Iterable[str]) -> set[str]:
        """Which of `shas` are stored: what is known already, the rest in one batch of lookups."""
        wanted = set(shas)
        if self._all is not None:
            return wanted & self._all
        unknown = wanted - self._held - self._absent
        found = self._store.revisions.stored_among(self._repo, unknown) if unknown else set()
        self._held |= found
        self._absent |= unknown - found
        return wanted & self._held


class _KnownAdvisories:
    """The repo's stored advisories a poll's revisions are planned against, and its first id.

    Read through the store's index a part at a time (`store.advisories.to_plan`): the open records
    once, then the records of each (file, key) pair the first time a revision's changes name it;
    then kept as the store keeps them (each revision's upsert applied: a record is replaced unless
    the stored one is newer). Each record is read and decoded at most once a poll, and only those a
    revision may close or undo: what a poll costs no longer grows with the repo's history. When a
    revision turns out stored by another worker, what was read is dropped and read again."""

    def __init__(self, store: Store, repo: RepoId, *, none_stored: bool = False) -> None:
        """`none_stored`: the repo had no revision stored when the poll began (a first backfill), so
        no advisory either: every record is one this poll writes, and nothing is read."""
        self._store = store
        self._repo = repo
        self._records: dict[str, AdvisoryRecord] = {}
        self._pairs: set[tuple[str, str | None]] = set()
        self._open_read = False
        self._all_held = none_stored
        self.first_id = store.first_id(repo)

    def records(self, pairs: frozenset[tuple[str, str | None]]) -> list[AdvisoryRecord]:
        """At least the records a revision whose changes name `pairs` may close or undo."""
        if self._all_held:
            return list(self._records.values())
        unread = pairs - self._pairs
        if unread or not self._open_read:
            for record in self._store.advisories.to_plan(self._repo, unread, open_ones=not self._open_read):
                self._records.setdefault(record.id, record)  # one kept this poll is the stored one
            self._pairs |= unread
            self._open_read = True
        return list(self._records.values())

    def saved(self, result: ProcessedRevision) -> None:
        if not result.saved:  # what the other worker stored is read next time
            self._records, self._pairs, self._open_read, self._all_held = {}, set(), False, False
            return
        for record in result.advisories:
            stored = self._records.get(record.id)
            if stored is None or stored.modified <= record.modified:
                self._records[record.id] = record


class _Ahead:
    """The next revision's snapshot fetched in one background thread while the current revision
    is processed: hub latency overlaps the diff, the estimate and the store's write instead of
    adding to them. Only hub reads run there (the store is written by the poll's thread alone);
    the poll's deadline holds there too (the fetch runs in a copy of the poll's context). A fetch
    that fails raises when its revision's turn comes, so the revisions before it are stored first."""

    def __init__(self, hub: HubClient, repo: RepoId) -> None:
        self._hub = hub
        self._repo = repo
        self._pool: ThreadPoolExecutor | None = None
        self._pending: tuple[str, Future[Snapshot]] | None = None

    def __enter__(self) -> _Ahead:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._pool is not None:
            # A fetch still running when the poll ends early (a failure, a shutdown) is not waited
            # for: the poll returns at its revision boundary (a shutdown's grace is not spent on a
            # revision that will not be stored), and the fetch's answer, bounded by its request
            # timeout and the deadline, is dropped. It never touches the store.
            self._pool.shutdown(wait=False, cancel_futures=True)

    def start(self, revision: RevisionRecord | None, previous: Snapshot) -> None:
        """Begin fetching `revision`'s snapshot (files unchanged since `previous` are reused)."""
        if revision is None:
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hubwatch-ahead")
        run = contextvars.copy_context().run
        future = self._pool.submit(run, self._hub.snapshot, self._repo, revision.sha, previous=previous)
        self._pending = (revision.sha, future)

    def take(self, revision: RevisionRecord, previous: Snapshot) -> Snapshot:
        """`revision`'s snapshot: the one fetched ahead, else fetched now."""
        pending, self._pending = self._pending, None
        if pending is not None and pending[0] == revision.sha:
            return pending[1].result()
        return self._hub.snapshot(self._repo, revision.sha, previous=previous)


def _republish_renamed(store: Store, repo: RepoId, settings: Settings, now: Clock) -> None:
    """After a rename, the repo's advisories name it by its new id (package, range, references,
    text), keeping their ids (from the first id) and bumping `modified` so OSV mirrors fetch them
    again: the stored history is re-derived under the new id and reconciled (`tracker.rederive`)."""
    from hubwatch.tracker.rederive import rederive_repo

    result = rederive_repo(store, repo, settings, now)
    log.info("%s: renamed; %d advisories republished under the new id", repo, len(result.records))


def poll_repos(
    repos: Iterable[RepoId],
    *,
    hub: HubClient,
    store: Store,
    settings: Settings,
    progress: Progress | None = None,
    on_outcome: Callable[[PollOutcome], None] | None = None,
    clock: Clock = system_clock,
    stop: Callable[[], bool] | None = None,
) -> list[PollOutcome]:
    """Poll each repo in turn; one repo's failure never stops the others.

    `clock` is the "now" of every poll time recorded (pass the one the store was opened with).
    The hub client's rate-limit gate is shared through the store (`hubstate.StoreWindow`) unless
    it is already: a one-shot `hubwatch poll` inside a window another worker found spent sends
    nothing, and its repos come back deferred (`Failed.deferred`), not failed.
    """
    if hub.guard.shared is None:
        hub.guard.share(StoreWindow(store, clock))
    outcomes: list[PollOutcome] = []
    for repo in repos:
        try:
            outcome = poll_repo(repo, hub=hub, store=store, settings=settings, progress=progress, now=clock, stop=stop)
        except Exception as exc:  # the loop must survive a bug on one repo's content; record it
            log.exception("polling %s failed", repo)
            reason = f"{repo}: internal error while processing: {exc!r}"
            store.repos.record_poll(repo, PollState.ERROR, reason, clock())
            outcome = Failed(repo, reason, PollState.ERROR, "report this with `hubwatch --debug poll " + str(repo) + "`")
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
        if isinstance(outcome, Failed) and outcome.token_rejected:
            break  # every later request would be refused the same way: stop calling the hub
    return outcomes


def next_poll_at(outcome: PollOutcome, failures: int, settings: Settings, at: datetime) -> datetime:
    """When to poll again: the interval, or exponential backoff (at least Retry-After) on failure."""
    retry = outcome.retry_after if isinstance(outcome, Failed) else None
    return at + timedelta(seconds=backoff_delay(failures, settings, retry))


def failed(outcomes: Sequence[PollOutcome]) -> list[Failed]:
    return [o for o in outcomes if isinstance(o, Failed)]
