"""Poll cycles on a timer: APScheduler 3 behind a small interface, due repos claimed by lease.

Each cycle claims due repos from the store (`claim_due`: on PostgreSQL, FOR UPDATE SKIP LOCKED
with a lease), polls them, and releases each with its next poll time, so any number of worker
processes share the repos without duplicate work.
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

from hubwatch.storage.records import RepoId
from hubwatch.tracker.errors import HubError
from hubwatch.tracker.poller import Failed, NewRevisions, PollOutcome, Unchanged, next_poll_at, poll_repos

if TYPE_CHECKING:
    from apscheduler.schedulers.background import BackgroundScheduler

    from hubwatch.settings import Settings
    from hubwatch.storage import RepoState, Store
    from hubwatch.tracker.hub import HubClient

__all__ = ["PollCycle", "Scheduler", "default_worker_id"]

log = logging.getLogger(__name__)

# How far before a repo's last poll the listing is read, for clock skew between us and the hub.
LISTING_MARGIN_S = 300


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


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
        clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
    ) -> None:
        self._hub, self._store, self._settings = hub, store, settings
        self.worker_id = worker_id or default_worker_id()
        self._batch, self._lease_s, self._clock = batch, lease_s, clock
        self._lock = threading.Lock()

    def __call__(self) -> list[PollOutcome]:
        """Run one cycle until no repo is due; returns every outcome, in order."""
        if not self._lock.acquire(blocking=False):
            return []  # a cycle is already running in this process
        try:
            outcomes: list[PollOutcome] = []
            seen: set[RepoId] = set()
            states = {s.repo: s for s in self._store.watched()}
            listed_at = self._clock()
            quiet = self._unchanged_by_listing(list(states.values()), listed_at)
            while True:
                claimed = self._store.claim_due(self.worker_id, self._clock(), self._batch, self._lease_s)
                claimed = [r for r in claimed if r not in seen]
                if not claimed:
                    _log_cycle(outcomes)
                    return outcomes
                seen.update(claimed)
                for repo in claimed:
                    prior = states[repo].failures if repo in states else 0
                    outcomes.append(self._poll_one(repo, quiet.get(repo), prior, listed_at))
        finally:
            self._lock.release()

    def poll_now(self, repo: RepoId) -> PollOutcome | None:
        """Poll one watched repo at once (a webhook said it changed); None when it is not watched."""
        state = self._store.repo_state(repo)  # one indexed lookup, not the whole watch list
        if state is None or not state.watched:
            return None
        (outcome,) = poll_repos([repo], hub=self._hub, store=self._store, settings=self._settings)
        return outcome

    def _unchanged_by_listing(self, states: list[RepoState], now: datetime) -> dict[RepoId, str]:
        """Due repos the recently-modified listing shows unchanged since their last poll (→ stored head).

        One listing per cycle (a page per ~1000 recently modified models on the hub) instead of
        one request per repo; any doubt (never polled, last poll failed, listing unavailable)
        leaves the repo out, and it gets its own head request.
        """
        polled = [
            s
            for s in states
            if s.state == "ok" and s.head_sha and s.last_polled_at and (s.next_poll_at is None or _utc(s.next_poll_at) <= now)
        ]
        if not polled:
            return {}
        since = min(_utc(s.last_polled_at) for s in polled if s.last_polled_at) - timedelta(seconds=LISTING_MARGIN_S)
        try:
            recent = self._hub.recently_modified(since)
        except HubError as exc:
            log.info("recently-modified listing unavailable (%s); checking each repo's head", exc)
            return {}
        if recent is None:
            return {}
        quiet: dict[RepoId, str] = {}
        for s in polled:
            seen = recent.get(s.repo)
            if seen is None or seen.sha == s.head_sha:
                quiet[s.repo] = str(s.head_sha)
        return quiet

    def _poll_one(self, repo: RepoId, quiet_head: str | None, prior_failures: int, listed_at: datetime) -> PollOutcome:
        outcome: PollOutcome
        if quiet_head is not None:
            # Known unchanged as of the listing, not as of now: the next listing starts from there.
            self._store.record_poll(repo, "ok", None, listed_at)
            outcome = Unchanged(repo, quiet_head)
        else:
            (outcome,) = poll_repos([repo], hub=self._hub, store=self._store, settings=self._settings)
        # Consecutive failures live in the store, so backoff holds whichever worker polls next.
        failures = prior_failures + 1 if isinstance(outcome, Failed) else 0
        if isinstance(outcome, Failed):
            log.warning("%s (%s)", outcome.reason, outcome.fix)
        self._store.release(repo, self.worker_id, next_poll_at(outcome, failures, self._settings, self._clock()))
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
        kwargs = {"next_run_time": datetime.now(timezone.utc)} if self._run_at_start else {}
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
