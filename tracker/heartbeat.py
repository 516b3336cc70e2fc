"""The lease heartbeat: while a worker polls, a thread renews its leases every third of a lease.

A worker holds a lease only for repos it is working on (its claimed batch); a crashed worker
renews nothing, so its leases run out within one lease length and another worker takes them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from hubwatch.domain.clock import Clock
from hubwatch.domain.records import RepoId

if TYPE_CHECKING:
    from hubwatch.storage import Store

__all__ = ["Heartbeat"]

log = logging.getLogger(__name__)


class Heartbeat:
    """Renews `worker_id`'s leases on the repos it holds, from a daemon thread started on first use."""

    def __init__(self, store: Store, worker_id: str, lease_s: float, clock: Clock) -> None:
        self._store, self._worker, self._lease_s, self._clock = store, worker_id, lease_s, clock
        self._held: dict[RepoId, int] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self.beats = 0  # renewals sent (for tests and logs)

    @property
    def interval_s(self) -> float:
        return self._lease_s / 3

    @contextmanager
    def holding(self, repos: Iterable[RepoId]) -> Iterator[None]:
        """Keep the leases on `repos` alive while the block runs."""
        repos = list(repos)
        with self._lock:
            for repo in repos:
                self._held[repo] = self._held.get(repo, 0) + 1
            if self._thread is None and not self._closed.is_set():
                self._thread = threading.Thread(target=self._run, name=f"hubwatch-heartbeat-{self._worker}", daemon=True)
                self._thread.start()
        try:
            yield
        finally:
            with self._lock:
                for repo in repos:
                    left = self._held.get(repo, 0) - 1
                    if left > 0:
                        self._held[repo] = left
                    else:
                        self._held.pop(repo, None)

    def release(self, repo: RepoId) -> None:
        """Stop renewing `repo` (its lease was just released)."""
        with self._lock:
            self._held.pop(repo, None)

    def beat(self) -> int:
        """Renew the held leases once; returns how many were still ours."""
        with self._lock:
            held = list(self._held)
        if not held:
            return 0
        renewed = self._store.leases.renew_many(held, self._worker, self._clock(), self._lease_s)
        self.beats += 1
        if renewed < len(held):
            log.warning("worker %s: %d of %d leases were lost (expired and taken); unique constraints keep "
                        "the store right", self._worker, len(held) - renewed, len(held))
        return renewed

    def _run(self) -> None:
        while not self._closed.wait(self.interval_s):
            try:
                self.beat()
            except Exception:  # the database may be briefly away; the next beat tries again
                log.exception("lease heartbeat of %s failed", self._worker)

    def close(self) -> None:
        self._closed.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=5)
