"""hubwatch's retry policy around every hub call: deadlines, deferral, a breaker, bounded retries.

`HubGuard.call` runs one translated hub call (`tracker/hub.py`) and decides, before and after it:

- a rejected token stops every later call of this client at once (no request) while the client
  would send that token (`bind_token`: the client's own token source, read on each call); once it
  would send another — a new client, or the token rotated in huggingface_hub's token file — the
  next call goes out;
- a 429 is never retried or slept on: `RateLimited(retry_after=…)` defers that repo; the hub's
  `RateLimit` header saying nothing is left (on any answer, a 429 included) closes this client's
  gate for the window: later calls raise `RateLimited` at once, sending nothing, so the other repos
  (and, for the listing, the cycle) are deferred too; so does a 429's Retry-After on a hub-wide
  call (the listing);
- with a `SharedWindow` (`share`; `PollCycle` gives the store's, `hubstate.StoreWindow`), the gate
  is shared by every worker on the store: a closing is recorded there, and a closing recorded by
  another worker closes this one's gate before it sends anything;
- a poll's deadline (`HUBWATCH_POLL_DEADLINE_S`) bounds all of its calls together;
- `HubUnavailable` (5xx, timeouts, resets) is retried a few times with a short exponential wait
  (tenacity), never past the deadline; `breaker_failures` such failed calls in a row open a
  circuit breaker (pybreaker): no call for `breaker_cooldown_s`, then one probe.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol, TypeVar

import pybreaker
import tenacity

from hubwatch.domain.hub_status import fingerprint
from hubwatch.tracker.errors import HubUnavailable, PollTimedOut, RateLimited, TokenRejected
from hubwatch.tracker.transport import Limits, RateGate, install, limits

__all__ = ["HubGuard", "SharedWindow", "end_poll_deadline", "poll_deadline", "start_poll_deadline"]

T = TypeVar("T")

_DEADLINE: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar(
    "hubwatch_poll_deadline", default=None
)  # (monotonic deadline, the seconds it was set for)


@contextmanager
def poll_deadline(seconds: float | None) -> Iterator[None]:
    """Every hub call inside the block shares one deadline, `seconds` from now (None: none)."""
    if seconds is None:
        yield
        return
    token = _DEADLINE.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def start_poll_deadline(seconds: float | None) -> contextvars.Token[tuple[float, float] | None]:
    """`poll_deadline` without a block: pass what it returns to `end_poll_deadline` (in a finally)."""
    return _DEADLINE.set((time.monotonic() + seconds, seconds) if seconds is not None else None)


def end_poll_deadline(token: contextvars.Token[tuple[float, float] | None]) -> None:
    _DEADLINE.reset(token)


class _NoTimeLeft(tenacity.stop.stop_base):
    """Stop retrying when less than a second of the poll's deadline is left (None: no deadline)."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        return self.deadline is not None and time.monotonic() + 1.0 >= self.deadline


class SharedWindow(Protocol):
    """The hub's rate-limit window as every worker sees it (kept in the store)."""

    def deferred_s(self) -> float:
        """Seconds until any worker may call the hub again (0: now); cheap (cached)."""
        ...

    def defer(self, seconds: float) -> None:
        """Record that no worker calls the hub for `seconds` from now."""
        ...


class HubGuard:
    """The policy of one hub client (see the module docstring); thread-safe."""

    def __init__(
        self,
        origin: str,
        *,
        timeout_s: float,
        retries: int = 2,
        breaker_failures: int = 5,
        breaker_cooldown_s: float = 60.0,
    ) -> None:
        self.origin = origin
        self._timeout = timeout_s
        self._retries = retries
        self._lock = threading.Lock()
        self._rejected: TokenRejected | None = None
        self._rejected_as: str | None = None  # the fingerprint of the token rejected
        self._token_of: Callable[[], str | None] | None = None
        self.gate = RateGate()
        self.shared: SharedWindow | None = None
        self.breaker = pybreaker.CircuitBreaker(
            fail_max=breaker_failures,
            reset_timeout=breaker_cooldown_s,
            exclude=[lambda exc: not isinstance(exc, HubUnavailable)],
            throw_new_error_on_trip=False,
            name=f"hub {origin}",
        )

    def bind_token(self, token_of: Callable[[], str | None]) -> None:
        """Where the token the next request sends comes from (`HubClient.token`): a rejection holds
        only while it gives the token rejected."""
        self._token_of = token_of

    @property
    def token_rejected(self) -> TokenRejected | None:
        """The rejection that stopped this client, or None (also once the token has changed)."""
        with self._lock:
            rejected, rejected_as = self._rejected, self._rejected_as
        if rejected is None or self._token_of is None or rejected_as is None:
            return rejected
        if fingerprint(self._token_of()) == rejected_as:
            return rejected
        with self._lock:  # another token now: the next call tries it
            if self._rejected is rejected:
                self._rejected = self._rejected_as = None
        return None

    def share(self, window: SharedWindow) -> None:
        """Share this client's rate-limit gate through `window` (the last one given wins)."""
        self.shared = window

    def call(self, fn: Callable[[], T], repo: str | None, revision: str | None = None) -> T:
        where = {"repo_id": repo, "revision": revision}
        rejected = self.token_rejected
        if rejected is not None:
            raise TokenRejected(f"not called: the hub rejected the token ({rejected})", **where)
        shared = self.shared
        if shared is not None:
            elsewhere = shared.deferred_s()
            if elsewhere > self.gate.wait_s(self.origin):
                self.gate.close(self.origin, elsewhere)  # another worker saw the window spent
        closed_before = self.gate.closed_until(self.origin)
        try:
            return self._call(fn, where)
        except RateLimited as exc:
            if repo is None and exc.retry_after and closed_before <= time.monotonic():
                # the hub answered a hub-wide call (the listing) with a 429: the hub is deferred
                self.gate.close(self.origin, exc.retry_after)
            raise
        finally:
            if shared is not None and self.gate.closed_until(self.origin) > closed_before:
                shared.defer(self.gate.wait_s(self.origin))

    def _call(self, fn: Callable[[], T], where: dict[str, str | None]) -> T:
        wait = self.gate.wait_s(self.origin)
        if wait > 0:
            raise RateLimited(
                f"deferred {wait:.0f} s: the hub's rate-limit window has no request left", retry_after=wait, **where
            )
        bounds = _DEADLINE.get()
        deadline = bounds[0] if bounds is not None else None
        if deadline is not None and time.monotonic() >= deadline:
            raise PollTimedOut(f"the poll's deadline of {bounds[1] if bounds else 0:.0f} s passed", **where)
        install()  # on the library's current session (a new client factory makes a new one)
        try:
            with limits(Limits(self._timeout, deadline, self.gate)):
                return self._through_breaker(fn, deadline)
        except pybreaker.CircuitBreakerError as exc:
            raise HubUnavailable(
                f"not called: the hub failed {self.breaker.fail_max} times in a row; the next try is a probe"
                f" after {self.breaker.reset_timeout:.0f} s",
                **where,
            ) from exc
        except TokenRejected as exc:
            rejected_as = fingerprint(self._token_of()) if self._token_of is not None else None
            with self._lock:
                self._rejected, self._rejected_as = exc, rejected_as
            raise

    def _through_breaker(self, fn: Callable[[], T], deadline: float | None) -> T:
        """`fn` (with its retries) counted by the breaker. pybreaker holds its lock for the whole of
        a call, which would let one hub request through at a time however many threads ask (a
        snapshot's parallel downloads, the next revision fetched ahead, repos polled together).
        While the circuit is closed the request runs outside that lock and only its outcome is
        handed to the breaker; an open circuit refuses at once and a half-open one lets its one
        probe through under the lock, as pybreaker does."""
        if self.breaker.current_state != pybreaker.STATE_CLOSED:
            probed: T = self.breaker.call(self._retrying, fn, deadline)
            return probed
        try:
            result = self._retrying(fn, deadline)
        except BaseException as exc:
            failure = exc

            def again() -> T:
                raise failure

            # Counted as pybreaker counts it (maybe opening the circuit), which raises it again; when
            # another thread's failures opened the circuit meanwhile, this failure is raised as it is.
            with contextlib.suppress(pybreaker.CircuitBreakerError):
                self.breaker.call(again)
            raise
        try:
            self.breaker.call(lambda: result)  # a success: the failure count starts again
        except pybreaker.CircuitBreakerError:
            pass  # another thread's failures opened the circuit meanwhile; this request did succeed
        return result

    def _retrying(self, fn: Callable[[], T], deadline: float | None) -> T:
        retrying = tenacity.Retrying(
            stop=tenacity.stop_any(
                tenacity.stop_after_attempt(self._retries + 1), tenacity.stop_before_delay(self._timeout),
                _NoTimeLeft(deadline),
            ),
            wait=tenacity.wait_exponential(multiplier=0.2, max=2.0),
            retry=tenacity.retry_if_exception(
                lambda exc: isinstance(exc, HubUnavailable) and not isinstance(exc, PollTimedOut)
            ),
            reraise=True,
        )
        return retrying(fn)
