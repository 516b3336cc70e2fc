"""Poll cycles on a timer: APScheduler 3 behind a small interface, due repos claimed by lease.

Each cycle reads the hub's recently-modified listing once, makes the watched repos it shows
moved due, then claims due repos from the store (`claim_due`: on PostgreSQL, FOR UPDATE SKIP
LOCKED with a lease), polls them, and releases each with its next poll time, so any number of
worker processes share the repos without duplicate work. While the listing works, a polled repo
waits `recheck_interval_s` for its next own head request (the safety re-check) and a cycle in
which nothing moved costs the listing alone; without the listing, each repo is polled every
`poll_interval_s`, and a repo the listing missed is still checked by its due time.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from hubwatch.domain.clock import Clock, system_clock
from hubwatch.domain.records import RepoId
from hubwatch.tracker.errors import HubError
from hubwatch.tracker.hubstate import halted
from hubwatch.tracker.poller import Failed, NewRevisions, PollOutcome, next_poll_at, poll_repos

if TYPE_CHECKING:
    from apscheduler.schedulers.background import BackgroundScheduler

    from hubwatch.settings import Settings
    from hubwatch.storage import Store
    from hubwatch.tracker.hub import HubClient, RecentModel

__all__ = ["PollCycle", "Scheduler", "default_worker_id"]

log = logging.getLogger(__name__)

# How far before a repo's last poll the listing is read, for clock skew between us and the hub.
LISTING_MARGIN_S = 300


def _log_cycle(outcomes: list[PollOutcome]) -> None:
    if not outcomes:
        return
    new = sum(len(o.shas) for o in outcomes if isinstance(o, NewRevisions))
    failed = sum(isinstance(o, Failed) for o in outcomes)
    log.info("poll cycle: %d repos polled, %d new revisions, %d failed", len(outcomes), new, failed)


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class PollCycle:
    """One poll cycle: claim due repos, poll them, release each with its next poll time."""

    def __init__(
        self,
        *,
        hub: HubClient,
        store: Store,
        settings: Settings,
        worker_id: str | None = None,
        batch: int = 10,
        lease_s: int = 900,
        clock: Clock = system_clock,
    ) -> None:
        self._hub, self._store, self._settings = hub, store, settings
        self.worker_id = worker_id or default_worker_id()
        self._batch, self._lease_s, self._clock = batch, lease_s, clock
        self._lock = threading.Lock()
        self._since: datetime | None = None  # where the next listing must reach back to

    def __call__(self) -> list[PollOutcome]:
        """Run one cycle until no repo is due; returns every outcome, in order.

        Store work follows what is due or moved, not the watch list: the recently-modified
        listing names the repos that moved since the last cycle, those that are watched are
        made due (one batched query each), and `claim_due` hands out those plus the repos whose
        safety re-check is due.
        """
        if not self._lock.acquire(blocking=False):
            return []  # a cycle is already running in this process
        try:
            if self._token_halted():
                return []  # the hub rejected this token: no request until the token changes
            outcomes: list[PollOutcome] = []
            seen: set[RepoId] = set()
            listed_at = self._clock()
            # Every repo not due was polled within the re-check interval: no listing need reach further.
            floor = listed_at - timedelta(seconds=self._settings.recheck_interval_s + LISTING_MARGIN_S)
            since = max(self._since, floor) if self._since is not None else floor
            recent = self._listing(since)
            if recent:
                self._mark_moved(recent, listed_at)
            if recent is not None:  # a failed listing leaves its window to the next one
                self._since = listed_at - timedelta(seconds=LISTING_MARGIN_S)
            while True:
                if self._token_halted():
                    return outcomes
                claimed = self._store.claim_due(self.worker_id, self._clock(), self._batch, self._lease_s)
                claimed = [r for r in claimed if r not in seen]
                if not claimed:
                    _log_cycle(outcomes)
                    return outcomes
                seen.update(claimed)
                failures = {s.repo: s.failures for s in self._store.watched_among(claimed)}
                for repo in claimed:
                    outcomes.append(self._poll_one(repo, failures.get(repo, 0), listing_ok=recent is not None))
        finally:
            self._lock.release()

    def poll_now(self, repo: RepoId) -> PollOutcome | None:
        """Poll one watched repo at once (a webhook said it changed); None when it is not watched."""
        state = self._store.repo_state(repo)  # one indexed lookup, not the whole watch list
        if state is None or not state.watched:
            return None
        (outcome,) = poll_repos([repo], hub=self._hub, store=self._store, settings=self._settings, clock=self._clock)
        return outcome

    def _token_halted(self) -> bool:
        problem = halted(self._store, self._hub, self._clock())
        if problem is not None:
            log.warning("not polling: %s (token %s); fix: %s", problem.reason, problem.fingerprint, problem.fix)
        return problem is not None

    def _listing(self, since: datetime) -> dict[RepoId, RecentModel] | None:
        """Models modified on the hub since `since` (a page per ~1000), or None when it cannot vouch."""
        try:
            return self._hub.recently_modified(since)
        except HubError as exc:
            log.info("recently-modified listing unavailable (%s); repos are checked when due", exc)
            return None

    def _mark_moved(self, recent: dict[RepoId, RecentModel], now: datetime) -> None:
        """Make the watched repos the listing shows at another commit than the stored head due now."""
        moved = [s.repo for s in self._store.watched_among(recent) if recent[s.repo].sha != s.head_sha]
        if moved:
            self._store.mark_due(moved, now)

    def _poll_one(self, repo: RepoId, prior_failures: int, *, listing_ok: bool) -> PollOutcome:
        """Poll a due repo by its own head request; the next is the re-check while the listing works."""
        (outcome,) = poll_repos([repo], hub=self._hub, store=self._store, settings=self._settings, clock=self._clock)
        # Consecutive failures live in the store, so backoff holds whichever worker polls next.
        failures = prior_failures + 1 if isinstance(outcome, Failed) else 0
        if isinstance(outcome, Failed):
            log.warning("%s (%s)", outcome.reason, outcome.fix)
        at = self._clock()
        if isinstance(outcome, Failed) and outcome.token_rejected:
            when = at  # not this repo's fault: due again once the token is fixed (cycles skip until then)
        elif listing_ok and not isinstance(outcome, Failed):
            # The listing tells when it moves (it reaches back before this poll), so its own
            # head request waits for the safety re-check.
            when = at + timedelta(seconds=self._settings.recheck_interval_s)
        else:
            when = next_poll_at(outcome, failures, self._settings, at)
        self._store.release(repo, self.worker_id, when)
        return outcome


class Scheduler:
    """Runs a job every `interval_s` seconds in a background thread (coalesced, one at a time)."""

    def __init__(self, job: Callable[[], object], interval_s: float, *, run_at_start: bool = True) -> None:
        self._job = job
        self._interval_s = interval_s
        self._run_at_start = run_at_start
        self._scheduler: BackgroundScheduler | None = None
        self._extra: ThreadPoolExecutor | None = None

    def _run(self) -> None:
        try:
            self._job()
        except Exception:  # the timer thread must survive one bad cycle; it is logged with its traceback
            log.exception("poll cycle failed")

    def start(self) -> None:
        from apscheduler.schedulers.background import BackgroundScheduler

        if self._scheduler is not None:
            return
        scheduler = BackgroundScheduler(timezone=timezone.utc)
        # The timer sleeps on wall time (APScheduler's), so its first run is at wall "now", not an injected clock's.
        kwargs = {"next_run_time": system_clock()} if self._run_at_start else {}
        scheduler.add_job(
            self._run,
            "interval",
            seconds=self._interval_s,
            id="poll-cycle",
            coalesce=True,
            max_instances=1,
            misfire_grace_time=max(1, int(self._interval_s)),
            **kwargs,
        )
        scheduler.start()
        self._scheduler = scheduler
        self._extra = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hubwatch-submit")

    def submit(self, job: Callable[[], object]) -> None:
        """Run `job` once, soon, on a worker thread beside the timer (e.g. a webhook's immediate poll)."""
        if self._extra is None:
            raise RuntimeError("the scheduler is not started")
        self._extra.submit(self._guarded, job)

    @staticmethod
    def _guarded(job: Callable[[], object]) -> None:
        try:
            job()
        except Exception:  # like the timer: one failing job is logged, the thread lives on
            log.exception("submitted job failed")

    def stop(self, wait: bool = True) -> None:
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=wait)
            self._scheduler = None
        if self._extra is not None:
            self._extra.shutdown(wait=wait, cancel_futures=True)
            self._extra = None

    @property
    def running(self) -> bool:
        return self._scheduler is not None
