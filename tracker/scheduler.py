"""Poll cycles on a timer: APScheduler 3 behind a small interface, due repos claimed by lease.

Each cycle reads the hub's recently-modified listing once per repo type watched (models, datasets:
the hub lists them apart, and each listing's busy, failed and since window are its own), makes the
watched repos they show moved due, then claims due repos from the store (`claim_due`: on
PostgreSQL, FOR UPDATE SKIP LOCKED with a lease), polls them, and releases each with its next poll
time, so any number of worker processes share the repos without duplicate work. While its type's
listing works, a polled repo waits `recheck_interval_s` for its next own head request (the safety
re-check) and a cycle in which nothing moved costs the listings alone; without it, each repo of the
type is polled every `poll_interval_s`, and a repo the listing missed is still checked by its due time.
"""

from __future__ import annotations

import contextvars
import hashlib
import logging
import math
import os
import socket
import sys
import threading
from collections.abc import Callable, Container
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from hubwatch.domain.clock import Clock, system_clock
from hubwatch.domain.records import RepoId, RepoType
from hubwatch.tracker.cycle_meter import CycleMeter
from hubwatch.tracker.errors import HubError
from hubwatch.tracker.heartbeat import Heartbeat
from hubwatch.tracker.hubstate import StoreWindow, halted
from hubwatch.tracker.poller import Failed, NewRevisions, PollOutcome, Unchanged, next_poll_at, poll_repos

if TYPE_CHECKING:
    from apscheduler.schedulers.background import BackgroundScheduler

    from hubwatch.settings import Settings
    from hubwatch.storage import Store
    from hubwatch.tracker.hub import RecentModel
    from hubwatch.tracker.hub_client import HubClient

__all__ = ["RECHECK_SPREAD", "PollCycle", "Scheduler", "default_worker_id", "recheck_at"]

log = logging.getLogger(__name__)

# How far before a repo's last poll the listing is read, for clock skew between us and the hub.
LISTING_MARGIN_S = 300

# The share of the re-check interval over which repos' re-checks are spread: each repo waits between
# (1 - RECHECK_SPREAD) and 1 times the interval, a fixed fraction for the repo, so repos polled in
# one cycle (a bulk backfill) do not all come due again in one cycle. Never beyond the interval:
# the listing's reach (`floor` in `PollCycle.__call__`) relies on it.
RECHECK_SPREAD = 0.25


def recheck_at(repo: RepoId, at: datetime, interval_s: float) -> datetime:
    """When a repo polled at `at` is due for its safety re-check: `at` plus its share of the interval."""
    digest = hashlib.blake2b(repo.key.encode(), digest_size=8).digest()
    fraction = int.from_bytes(digest, "big") / 2**64  # in [0, 1), the same for the repo every time
    return at + timedelta(seconds=interval_s * (1 - RECHECK_SPREAD * fraction))


def _log_cycle(outcomes: list[PollOutcome]) -> None:
    if not outcomes:
        return
    new = sum(len(o.shas) for o in outcomes if isinstance(o, NewRevisions))
    deferred = sum(isinstance(o, Failed) and o.deferred for o in outcomes)
    failed = sum(isinstance(o, Failed) and not o.deferred for o in outcomes)
    log.info("poll cycle: %d repos polled, %d new revisions, %d failed, %d deferred by the rate limit",
             len(outcomes), new, failed, deferred)


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class PollCycle:
    """One poll cycle: claim due repos as poll slots free, poll them under a renewed lease, release each.

    Leases last `settings.lease_s` and a heartbeat renews them every third of that while a repo
    is polled, so a crashed worker's repos are free again within one lease; `stop()` (SIGTERM)
    ends the cycle at the next revision boundary with nothing recorded as a failure.
    """

    def __init__(
        self,
        *,
        hub: HubClient,
        store: Store,
        settings: Settings,
        worker_id: str | None = None,
        batch: int | None = None,
        lease_s: float | None = None,
        clock: Clock = system_clock,
    ) -> None:
        self._hub, self._store, self._settings = hub, store, settings
        self.worker_id = worker_id or default_worker_id()
        self._batch = batch or settings.claim_batch
        self._lease_s = lease_s or settings.lease_s
        self._clock = clock
        self._lock = threading.Lock()
        self._since: dict[RepoType, datetime] = {}  # per repo type, where its next listing must reach back to
        self._listed_at: dict[RepoType, datetime] = {}  # per repo type, when this worker last read its listing
        self._stopping = threading.Event()
        self.heartbeat = Heartbeat(store, self.worker_id, self._lease_s, clock)
        hub.guard.share(StoreWindow(store, clock))  # one rate-limit window for every worker on the store

    def __call__(self) -> list[PollOutcome]:
        """Run one cycle until no repo is due (or `stop()`); returns every outcome, in order.

        Store work follows what is due or moved, not the watch list: the recently-modified
        listing of each repo type watched (one indexed query says which) names the repos that
        moved since the last cycle, those that are watched are made due (one batched query each),
        and `claim_due` hands out those plus the repos whose safety re-check is due. A listing too
        busy to reach back (over its entry limit) makes every watched repo of its type due for this
        one cycle, and its next listing reaches back only to it; a failed one leaves its type to
        the re-checks and backoff of a cycle without the listing. Types are independent.
        """
        if self._stopping.is_set() or not self._lock.acquire(blocking=False):
            return []  # stopping, or a cycle is already running in this process
        try:
            if self._token_halted():
                return []  # the hub rejected this token: no request until the token changes
            meter = CycleMeter(self._hub.endpoint, self.worker_id, self._clock)
            listed_at = self._clock()
            watched = self._store.repos.watched_types()  # one indexed statement, not the watch list
            moved: list[datetime] = []  # per listing, when the newest work it shows appeared
            for repo_type in RepoType:
                if repo_type in watched:
                    meter.listings[repo_type] = self._read_listing(repo_type, listed_at, moved)
            share = self._fair_share(min(moved) if moved else None)
            # A type not listed this cycle (none watched when asked) counts as listed: its next
            # listing reaches back past any poll of it now, as a fresh worker's does.
            working = {t for t in RepoType if meter.listings.get(t, "none") != "failed"}
            outcomes = self._poll_due(share, listing_ok=working)
            _log_cycle(outcomes)
            self._record(meter, outcomes)
            return outcomes
        finally:
            self._lock.release()

    def _read_listing(self, repo_type: RepoType, listed_at: datetime, moved: list[datetime]) -> str:
        """Read `repo_type`'s listing back to its previous one less the clock-skew margin, make the
        watched repos it shows moved due (or, busy, every watched repo of the type) and say how it
        went; the time its newest work appeared goes in `moved`."""
        # Every repo not due was polled within the re-check interval: no listing need reach further.
        floor = listed_at - timedelta(seconds=self._settings.recheck_interval_s + LISTING_MARGIN_S)
        previous = self._since.get(repo_type)
        since = max(previous, floor) if previous is not None else floor
        recent, outcome = self._listing(repo_type, since)
        if recent:
            appeared = self._mark_moved(repo_type, recent, listed_at)
            if appeared is not None:
                moved.append(appeared)
        if outcome == "busy":
            made = self._store.leases.mark_all_due(listed_at, repo_type)
            log.warning("recently-modified %s listing too busy to reach back to %s: %d watched %ss get their "
                        "own head request this cycle", repo_type, since.isoformat(), made, repo_type)
        if outcome != "failed":  # a failed listing leaves its window to the next one
            self._since[repo_type] = listed_at - timedelta(seconds=LISTING_MARGIN_S)
            self._listed_at[repo_type] = listed_at
        return outcome

    def _poll_due(self, share: float, *, listing_ok: Container[RepoType]) -> list[PollOutcome]:
        """Claim due repos and poll them, at most `min(poll_concurrency, claim_batch)` at once: as
        soon as one poll ends its slot is claimed for again (no batch waits for its slowest repo),
        until nothing new is due, this cycle has its `share`, it stops or the token is rejected.
        Polls run in threads (each in a copy of this context; inline when one at a time); outcomes
        come back in claim order. A repo claimed but not started when the cycle stops (a shutdown,
        a rejected token, a bug raised by another poll) is unleased for whichever worker comes next.
        """
        width = max(1, min(self._settings.poll_concurrency, self._batch))
        quota = sys.maxsize if share == float("inf") else math.ceil(share)
        order: list[RepoId] = []  # claimed, in claim order
        polled: set[RepoId] = set()
        broken: set[RepoId] = set()  # their poll raised: left leased, as a crashed worker's would be
        outcomes: dict[RepoId, PollOutcome] = {}
        returned: set[RepoId] = set()  # polled this cycle and due again: left to the next cycle
        running: dict[Future[None], RepoId] = {}
        holds: dict[RepoId, ExitStack] = {}
        halt = threading.Event()
        exhausted = False

        def one(repo: RepoId, prior_failures: int) -> None:
            if self._stopping.is_set() or halt.is_set():
                return
            outcome = self._poll_one(repo, prior_failures, listing_ok=repo.repo_type in listing_ok)
            outcomes[repo] = outcome
            if isinstance(outcome, Failed) and outcome.token_rejected:
                halt.set()  # every later request would be refused the same way

        pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix="hubwatch-poll") if width > 1 else None
        try:
            while True:
                free = min(width - len(running), quota - len(order))
                if free > 0 and not exhausted and not halt.is_set() and not self._stopping.is_set():
                    if self._token_halted():
                        exhausted = True
                    else:
                        fresh, again = self._claim(free, polled, returned)
                        returned.update(again)
                        exhausted = not fresh and not again
                        failures = {s.repo: s.failures for s in self._store.repos.watched_among(fresh)} if fresh else {}
                        for repo in fresh:
                            order.append(repo)
                            polled.add(repo)
                            holds[repo] = hold = ExitStack()
                            hold.enter_context(self.heartbeat.holding([repo]))
                            if pool is None:
                                done: Future[None] = Future()
                                try:
                                    one(repo, failures.get(repo, 0))
                                    done.set_result(None)
                                except Exception as exc:  # raised below, as from a thread
                                    done.set_exception(exc)
                                running[done] = repo
                            else:
                                ctx = contextvars.copy_context()
                                running[pool.submit(ctx.run, one, repo, failures.get(repo, 0))] = repo
                        if fresh or again:
                            continue  # fill every free slot before waiting
                if not running:
                    break
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    repo = running.pop(future)
                    holds.pop(repo).close()
                    if future.exception() is not None:
                        broken.add(repo)
                    future.result()  # a bug in one poll is raised here, as it would be one at a time
        except BaseException:
            halt.set()  # claim nothing more, start nothing more; let the running polls end
            raise
        finally:
            if pool is not None:
                pool.shutdown(wait=True)
            broken.update(repo for future, repo in running.items() if future.exception() is not None)
            for hold in holds.values():
                hold.close()
            left = [r for r in order if r not in outcomes and r not in broken]
            if left:
                self._store.leases.unlease(left, self.worker_id)
        return [outcomes[r] for r in order if r in outcomes]

    def _claim(self, want: int, polled: set[RepoId], returned: set[RepoId]) -> tuple[list[RepoId], list[RepoId]]:
        """Lease up to `want` due repos not polled yet this cycle, and the repos the claim met that
        were polled this cycle and are due again already (unleased at once, left to the next cycle).
        The claim asks for as many more as it may meet of those (`returned`), so they cannot fill it."""
        claimed = self._store.leases.claim_due(self.worker_id, self._clock(), want + len(returned), self._lease_s)
        again = [r for r in claimed if r in polled]
        fresh = [r for r in claimed if r not in polled]
        extra = fresh[want:]  # more than the free slots (fewer polled repos came back than allowed for)
        if again or extra:
            self._store.leases.unlease(again + extra, self.worker_id)
        return fresh[:want], [r for r in again if r not in returned]

    def poll_now(self, repo: RepoId) -> PollOutcome | None:
        """Poll one watched repo at once (a webhook said it changed), under its lease like any poll.

        None when it is not watched, or when another worker holds it right now (that worker's
        poll, or the next cycle's listing, sees the change).
        """
        state = self._store.repo_state(repo)  # one indexed lookup, not the whole watch list
        if state is None or not state.watched or self._stopping.is_set():
            return None
        if not self._store.leases.claim_repo(repo, self.worker_id, self._clock(), self._lease_s):
            log.info("webhook for %s: leased by another worker, left to it", repo)
            return None
        meter = CycleMeter(self._hub.endpoint, self.worker_id, self._clock)
        with self.heartbeat.holding([repo]):
            outcome = self._poll_one(repo, state.failures, listing_ok=repo.repo_type in self._since)
        self._record(meter, [outcome])
        return outcome

    def _token_halted(self) -> bool:
        problem = halted(self._store, self._hub, self._clock())
        if problem is not None:
            log.warning("not polling: %s (token %s); fix: %s", problem.reason, problem.fingerprint, problem.fix)
        return problem is not None

    def _fair_share(self, moved_since: datetime | None = None) -> float:
        """How many repos this cycle takes: all that are due when it is the only live worker, else
        its share of them (at least one batch) — the others' cycles, within one interval, take the rest.

        What is due is shared among the live workers that have not had their turn at it yet: a peer
        that finished a cycle after the work appeared (`moved_since`, the listing's time of the
        moves) has taken its share already, so the last worker of a round takes what is left
        instead of leaving a shrinking tail to later intervals.
        """
        now = self._clock()
        peers = self._store.telemetry.live_workers(now - timedelta(seconds=2 * self._settings.poll_interval_s))
        peers.add(self.worker_id)
        if len(peers) == 1:
            return float("inf")
        had_turn = self._store.telemetry.live_workers(moved_since) & peers if moved_since is not None else set()
        had_turn.discard(self.worker_id)
        due = self._store.leases.due_count(now)
        return float(max(self._batch, -(-due // (len(peers) - len(had_turn)))))

    def stop(self) -> None:
        """Stop claiming; the repo being polled stops at its next revision boundary."""
        self._stopping.set()

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for a running cycle to end; True when none runs."""
        if not self._lock.acquire(timeout=max(0.0, timeout_s)):
            return False
        self._lock.release()
        return True

    def close(self) -> None:
        self.heartbeat.close()

    def _listing(self, repo_type: RepoType, since: datetime) -> tuple[dict[RepoId, RecentModel] | None, str]:
        """Repos of `repo_type` modified on the hub since `since` (a page per ~1000) and how the
        listing went: `ok`, `busy` (more entries than it reads: None) or `failed` (None)."""
        try:
            recent = self._hub.recently_modified(since, repo_type=repo_type)
        except HubError as exc:
            log.info("recently-modified %s listing unavailable (%s); %ss are checked when due", repo_type, exc,
                     repo_type)
            return None, "failed"
        return recent, "ok" if recent is not None else "busy"

    def _mark_moved(self, repo_type: RepoType, recent: dict[RepoId, RecentModel], now: datetime) -> datetime | None:
        """Make the watched repos `repo_type`'s listing shows at another commit than the stored head
        due now; returns the earliest time a watched repo moved since this worker's previous listing
        of the type (None: none did)."""
        listed_at = self._listed_at.get(repo_type)
        watched = self._store.repos.watched_among(r for r in recent if r.repo_type is repo_type)
        moved = [s.repo for s in watched if recent[s.repo].sha != s.head_sha]
        if moved:
            self._store.repos.mark_due(moved, now)
        times = [t for t in (recent[s.repo].last_modified for s in watched) if t is not None]
        fresh = [t for t in times if listed_at is None or t >= listed_at]
        return min(fresh) if fresh and listed_at is not None else None

    def _poll_one(self, repo: RepoId, prior_failures: int, *, listing_ok: bool) -> PollOutcome:
        """Poll a due repo by its own head request; the next is the re-check while the listing works."""
        (outcome,) = poll_repos([repo], hub=self._hub, store=self._store, settings=self._settings, clock=self._clock,
                                stop=self._stopping.is_set)
        # Consecutive failures live in the store, so backoff holds whichever worker polls next.
        deferred = isinstance(outcome, Failed) and outcome.deferred
        failures = prior_failures if deferred else prior_failures + 1 if isinstance(outcome, Failed) else 0
        if isinstance(outcome, Failed):
            log.log(logging.INFO if deferred else logging.WARNING, "%s (%s)", outcome.reason, outcome.fix)
        at = self._clock()
        if isinstance(outcome, Failed) and outcome.token_rejected:
            when = at  # not this repo's fault: due again once the token is fixed (cycles skip until then)
        elif isinstance(outcome, Failed) and outcome.deferred:
            # The hub's rate limit, not the repo: due again when the window reopens, no backoff counted.
            when = at + timedelta(seconds=max(1.0, outcome.retry_after or self._settings.poll_interval_s))
        elif self._stopping.is_set() and not isinstance(outcome, Failed):
            when = at  # stopped between revisions: due again at once, for whichever worker is up
        elif listing_ok and not isinstance(outcome, Failed):
            # The listing tells when it moves (it reaches back before this poll), so its own
            # head request waits for the safety re-check.
            when = recheck_at(repo, at, self._settings.recheck_interval_s)
        else:
            when = next_poll_at(outcome, failures, self._settings, at)
        if isinstance(outcome, (Unchanged, NewRevisions)) and outcome.conversion_due is not None:
            when = min(when, outcome.conversion_due)  # a dataset head waiting for its parquet conversion
        self.heartbeat.release(repo)
        self._store.leases.release(repo, self.worker_id, when)
        return outcome

    def _record(self, meter: CycleMeter, outcomes: list[PollOutcome]) -> None:
        # Every cycle is recorded, also one that found nothing: it also tells the other workers this one is live.
        try:
            self._store.telemetry.record_cycle(meter.report(outcomes, self._store))
            keep = timedelta(days=self._settings.poll_runs_keep_days)
            self._store.telemetry.prune_poll_runs(self._clock() - keep)  # one bounded DELETE a cycle
        except Exception:  # telemetry must never fail a cycle
            log.exception("recording poll telemetry failed")


class Scheduler:
    """Runs a job every `interval_s` seconds in a background thread (coalesced, one at a time)."""

    def __init__(
        self, job: Callable[[], object], interval_s: float, *, run_at_start: bool = True, jitter_s: float = 0.0
    ) -> None:
        self._job = job
        self._interval_s = interval_s
        # A random delay of each run, so which of several workers reads a fresh listing first (and
        # so polls what moved) changes from cycle to cycle instead of following fixed start times.
        self._jitter_s = jitter_s
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
        kwargs: dict[str, Any] = {"next_run_time": system_clock()} if self._run_at_start else {}
        scheduler.add_job(
            self._run,
            "interval",
            seconds=self._interval_s,
            id="poll-cycle",
            coalesce=True,
            max_instances=1,
            misfire_grace_time=max(1, int(self._interval_s)),
            jitter=self._jitter_s or None,
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
