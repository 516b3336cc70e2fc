"""The sender: delivers the outbox after commit, at least once.

Each sweep claims due messages under a lease (two senders never hold the same row), delivers them
and records the outcome in the row: sent; retried later with exponential backoff; dead after
HUBWATCH_NOTIFY_MAX_ATTEMPTS; skipped when a pin subscription finds no pin affected. A sender
killed mid-sweep leaves its rows leased; the lease expires and the next sweep delivers them. A
webhook's `webhook-id` stays the same on every retry, so a receiver de-duplicates the rare second
delivery (sent, then killed before it was recorded).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from hubwatch.domain.clock import Clock, system_clock
from hubwatch.notify.message import render
from hubwatch.notify.pins import restrict_to_pins
from hubwatch.notify.targets import DeliveryFailed, deliver, shown_url

if TYPE_CHECKING:
    from hubwatch.settings import Settings
    from hubwatch.storage import Store
    from hubwatch.storage.notify.notify import NotifyStore, OutboxMessage, Subscription

__all__ = ["FlushReport", "Sender", "backoff", "notify_store"]

log = logging.getLogger("hubwatch.notify")
MAX_BACKOFF_S = 6 * 3600.0
BATCH = 10  # messages claimed per round; the lease covers delivering all of them


def notify_store(store: Store, clock: Clock | None = None) -> NotifyStore:
    """The subscriptions and outbox of `store`'s database."""
    return store.notify(clock)


def backoff(attempts: int, base_s: float) -> float:
    """Seconds before the next try after `attempts` failed ones: base, 2×base, 4×base, … ≤ 6 h."""
    return float(min(base_s * 2.0 ** max(attempts - 1, 0), MAX_BACKOFF_S))


@dataclass
class FlushReport:
    """What one sweep did (messages; a grouped message counts once)."""

    sent: int = 0
    retried: int = 0
    dead: int = 0
    skipped: int = 0
    postponed: int = 0
    hastened: int = 0  # messages in backoff made due at once (`flush(retry_now=True)`), before the sweep

    @property
    def total(self) -> int:
        return self.sent + self.retried + self.dead + self.skipped + self.postponed


class Sender:
    """Delivers due outbox messages of one store."""

    def __init__(self, store: Store, settings: Settings, worker_id: str | None = None, clock: Clock | None = None) -> None:
        self._clock = clock or system_clock
        self.store = store
        self.notes = notify_store(store, self._clock)
        self.settings = settings
        self.worker_id = worker_id or f"notify:{socket.gethostname()}:{os.getpid()}"
        self._lease_s = BATCH * settings.notify_timeout_s + 60

    def flush(self, rounds: int = 100, stop: threading.Event | None = None, *, retry_now: bool = False) -> FlushReport:
        """Deliver what is due now (at most `rounds` batches). Once `stop` is set, no further
        delivery starts: the one in flight finishes and is recorded, the rest of the claimed rows
        go back untried (no attempt counted, nothing marked failed).

        `retry_now`: messages waiting in backoff are due now too (a target is back; `notify flush
        --now`). Made due once, before the sweep: one that fails again backs off as usual, it is
        not tried again in this sweep. Digests and the rate limit keep their times."""
        report = FlushReport()
        if retry_now:
            report.hastened = self.notes.retry_now(self._clock())
        for _ in range(rounds):
            if stop is not None and stop.is_set():
                break
            claimed = self.notes.claim(self.worker_id, self._clock(), BATCH, self._lease_s)
            if not claimed:
                break
            by_sub: dict[int, list[OutboxMessage]] = defaultdict(list)
            for message in claimed:
                by_sub[message.subscription_id].append(message)
            for sub_id, messages in by_sub.items():
                if stop is not None and stop.is_set():
                    self.notes.release([m.id for m in messages], self.worker_id)
                    continue
                self._deliver_for(sub_id, messages, report)
        return report

    def _deliver_for(self, sub_id: int, messages: list[OutboxMessage], report: FlushReport) -> None:
        sub = self.notes.subscription(sub_id)
        ids = [m.id for m in messages]
        if sub is None:  # removed while its rows were claimed: its rows went with it
            return
        now = self._clock()
        hour_ago = now - timedelta(hours=1)
        count, oldest = self.notes.sent_since([sub_id], hour_ago).get(sub_id, (0, None))
        allowance = self.settings.notify_rate_per_hour - count
        if allowance <= 0:
            until = (oldest or now) + timedelta(hours=1, seconds=1)
            self.notes.postpone(ids, self.worker_id, until)
            report.postponed += 1
            return
        units: list[list[OutboxMessage]]
        if sub.digest or len(messages) > allowance:  # one message, or the rest grouped as the last one
            keep = 0 if sub.digest else allowance - 1
            units = [[m] for m in messages[:keep]] + [messages[keep:]]
        else:
            units = [[m] for m in messages]
        for unit in units:
            self._send(sub, unit, report)

    def _send(self, sub: Subscription, unit: Sequence[OutboxMessage], report: FlushReport) -> None:
        sendable: list[OutboxMessage] = []
        payloads: list[dict[str, Any]] = []
        for message in unit:
            payload = message.payload
            if sub.pins_path is not None:
                restricted = restrict_to_pins(self.store, sub.pins_path, payload)
                if restricted is None:
                    self.notes.mark_skipped([message.id], self.worker_id, "no pin under the path is affected")
                    report.skipped += 1
                    continue
                payload = restricted
            sendable.append(message)
            payloads.append(payload)
        if not sendable:
            return
        ids = [m.id for m in sendable]
        unit = sendable
        key = unit[0].key if len(unit) == 1 else f"{sub.id}:group:{','.join(map(str, sorted(ids)))}"
        digest = sub.digest if sub.digest or len(unit) > 1 else None
        outgoing = render(payloads, self.settings.public_url, key, digest=digest)
        now = self._clock()
        try:
            deliver(sub.url, sub.secret, outgoing, self.settings.notify_timeout_s)
        except DeliveryFailed as exc:
            attempts = max(m.attempts for m in unit) + 1
            if attempts >= self.settings.notify_max_attempts:
                self.notes.mark_failed(ids, self.worker_id, str(exc), None)
                report.dead += 1
                log.warning("notification %s to subscription %d is dead after %d attempts: %s",
                            outgoing.msg_id, sub.id, attempts, exc)  # fmt: skip
            else:
                retry_at = now + timedelta(seconds=backoff(attempts, self.settings.notify_backoff_s))
                self.notes.mark_failed(ids, self.worker_id, str(exc), retry_at)
                report.retried += 1
                log.info("notification %s to subscription %d failed (attempt %d), retrying at %s: %s",
                         outgoing.msg_id, sub.id, attempts, retry_at.isoformat(), exc)  # fmt: skip
            return
        # the rows delivered together share the message's id: the rate limit counts distinct ids
        self.notes.mark_sent(ids, self.worker_id, now, outgoing.msg_id)
        report.sent += 1
        log.info("notification %s sent to subscription %d (%s)", outgoing.msg_id, sub.id, shown_url(sub.url))

    def run(self, stop: threading.Event) -> None:
        """Sweep every HUBWATCH_NOTIFY_INTERVAL_S seconds until `stop` is set (`hubwatch run`)."""
        from hubwatch.storage.errors import StorageError

        while not stop.is_set():
            try:
                self.flush(stop=stop)
            except StorageError as exc:  # the database is away: the rows wait, nothing is lost
                log.warning("notification sweep failed: %s", exc)
            stop.wait(self.settings.notify_interval_s)

    def start(self) -> tuple[threading.Thread, threading.Event]:
        """`run` in a daemon thread; set the returned event to stop it."""
        stop = threading.Event()
        thread = threading.Thread(target=self.run, args=(stop,), name="hubwatch-notify", daemon=True)
        thread.start()
        return thread, stop
