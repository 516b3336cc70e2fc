"""The hub-wide state kept in the store: a rejected token, by fingerprint (never the token itself).

When the hub answers 401 "Invalid credentials in Authorization header", every request fails the
same way: the poller records the rejection here (store meta `hub_token_rejected`) and every worker
stops calling the hub while its token has that fingerprint. A worker started with another token
(settings changed) polls again and clears it on its first good answer. `/healthz` and the index
page read it (`token_problem`).

The hub's rate-limit window is shared the same way (`StoreWindow`, store meta `hub_deferred_until`):
a worker that learns the window is spent records until when, and every worker's guard reads it
(at most every few seconds) before calling the hub.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from hubwatch.domain.clock import Clock, system_clock

from hubwatch.domain.hub_status import TOKEN_KEY, TokenProblem, fingerprint
from hubwatch.domain.times import rfc3339
from hubwatch.storage.errors import StorageError

if TYPE_CHECKING:
    from hubwatch.storage import Store
    from hubwatch.tracker.hub_client import HubClient

__all__ = ["StoreWindow", "clear_token_problem", "halted", "record_token_problem", "token_problem"]

log = logging.getLogger(__name__)


def token_problem(store: Store) -> TokenProblem | None:
    return TokenProblem.loads(store.meta(TOKEN_KEY))


def record_token_problem(store: Store, token: str | None, reason: str, fix: str, at: datetime) -> None:
    store.set_meta(TOKEN_KEY, TokenProblem(fingerprint(token), reason, fix, rfc3339(at)).dumps())


def clear_token_problem(store: Store) -> None:
    if store.meta(TOKEN_KEY):
        store.set_meta(TOKEN_KEY, "")


def halted(store: Store, hub: HubClient, at: datetime) -> TokenProblem | None:
    """The token problem that stops this client calling the hub, or None.

    The client's own rejection (recorded in the store if it is not yet), else one recorded by any
    worker for a token of the same fingerprint. Another token is tried again.
    """
    rejected = hub.guard.token_rejected
    problem = token_problem(store)
    mine = fingerprint(hub.token)
    if rejected is not None:
        if problem is None or problem.fingerprint != mine:
            record_token_problem(store, hub.token, "the hub rejected the token (401 invalid credentials)", rejected.fix, at)
            problem = token_problem(store)
        return problem
    return problem if problem is not None and problem.fingerprint == mine else None


class StoreWindow:
    """The hub's rate-limit window shared by every worker on `store` (`guard.SharedWindow`).

    Read from the store at most once per `refresh_s` (a worker that records a deferral knows it at
    once); a store that cannot be read defers nothing (the local gate still applies).
    """

    def __init__(self, store: Store, clock: Clock = system_clock, refresh_s: float = 5.0) -> None:
        self._store, self._clock, self._refresh_s = store, clock, refresh_s
        self._lock = threading.Lock()
        self._until: datetime | None = None
        self._read_at: float | None = None  # monotonic time of the last read

    def deferred_s(self) -> float:
        with self._lock:
            stale = self._read_at is None or time.monotonic() - self._read_at >= self._refresh_s
        if stale:
            try:
                until = self._store.leases.hub_deferred_until()
            except StorageError as exc:
                log.warning("could not read the hub's shared rate-limit window: %s", exc)
                until = None
            with self._lock:
                self._until, self._read_at = until, time.monotonic()
        with self._lock:
            until = self._until
        return max(0.0, (until - self._clock()).total_seconds()) if until is not None else 0.0

    def defer(self, seconds: float) -> None:
        until = self._clock() + timedelta(seconds=seconds)
        with self._lock:
            if self._until is None or until > self._until:
                self._until = until
        try:
            self._store.leases.defer_hub(until)
        except StorageError as exc:
            log.warning("could not record the hub's rate-limit window for the other workers: %s", exc)
