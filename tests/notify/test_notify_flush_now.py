"""`hubwatch notify flush` and a target that fails, then comes back: plain flush keeps the backoff and
says what waits and when; `flush --now` sends what waits in backoff (a real webhook receiver, down
then up; SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from hubwatch.cli import cli
from hubwatch.domain.records import ChangeRecord, Direction, Kind, RepoId, RevisionRecord, Severity
from hubwatch.notify.sender import notify_store
from hubwatch.notify.targets import new_secret
from hubwatch.notify.policy import NotifyPolicy
from hubwatch.storage import Store
from hubwatch.storage.notify.notify import NotifyStore, SubscriptionSpec
from receivers import WebhookReceiver

REPO = RepoId("acme", "model")
START = datetime(2026, 12, 6, 16, 58, tzinfo=UTC)
COUNTS = "dead 0, skipped 0, postponed 0 (rate limit)"
HINT = "`hubwatch notify flush --now` sends them now"


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def queued(database_url: str, clock: Clock) -> Iterator[tuple[NotifyStore, WebhookReceiver]]:
    """One message queued for a webhook receiver that is down (its port closed)."""
    hook = WebhookReceiver()
    hook.secret = new_secret()
    with Store.open(database_url, clock, notify=NotifyPolicy()) as store:
        store.watch(REPO)
        assert store.save_revision(REPO, RevisionRecord("a" * 40, None, clock(), "first"), [], {}, [], None, [])
        notes = notify_store(store, clock)
        notes.add(SubscriptionSpec(url=hook.url, secret=hook.secret))
        change = ChangeRecord(Kind.PICKLE, Severity.HIGH, "pytorch_model.bin", "a pickle file appeared", {},
                              Direction.HAZARD)  # fmt: skip
        assert store.save_revision(REPO, RevisionRecord("b" * 40, "a" * 40, clock(), "swap the weights"),
                                   [], {}, [change], None, [])  # fmt: skip
        try:
            yield notes, hook
        finally:
            hook.stop()


def flush(database_url: str, clock: Clock, *args: str) -> str:
    import hubwatch.cli.commands  # noqa: F401 - registers the commands

    env = {"HUBWATCH_DATABASE_URL": database_url, "HF_TOKEN": "", "HUBWATCH_PUBLIC_URL": "https://hw.example",
           "HUBWATCH_NOTIFY_BACKOFF_S": "300", "HUBWATCH_NOTIFY_TIMEOUT_S": "3"}  # fmt: skip
    result = CliRunner().invoke(cli, ["notify", "flush", *args], env=env, obj={"clock": clock},
                                catch_exceptions=False)  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def test_flush_now_sends_what_waits_in_backoff_once_the_target_is_back(
    database_url: str, clock: Clock, queued: tuple[NotifyStore, WebhookReceiver]
) -> None:
    notes, hook = queued
    assert flush(database_url, clock) == (  # connection refused: retried in 5 min
        f"sent 0, retrying 1, {COUNTS}; 1 waiting in backoff, next attempt 2026-12-06T17:03:00Z (in 5 min); {HINT}"
    )
    clock.now += timedelta(minutes=1)
    assert flush(database_url, clock, "--now") == (  # still down: tried once more, then the next step (10 min)
        f"sent 0, retrying 1, {COUNTS}; 1 taken out of backoff; "
        f"1 waiting in backoff, next attempt 2026-12-06T17:09:00Z (in 10 min); {HINT}"
    )
    (row,) = notes.messages()
    assert row["attempts"] == 2 and row["state"] == "pending"

    hook.start()  # the target is back
    clock.now += timedelta(minutes=6)
    assert flush(database_url, clock) == (  # a plain flush keeps the backoff, and says so
        f"sent 0, retrying 0, {COUNTS}; 1 waiting in backoff, next attempt 2026-12-06T17:09:00Z (in 4 min); {HINT}"
    )
    assert hook.received == []
    assert flush(database_url, clock, "--now") == f"sent 1, retrying 0, {COUNTS}; 1 taken out of backoff"
    assert hook.rejected == [] and len(hook.received) == 1
    (revision,) = hook.received[0]["data"]["revisions"]
    assert revision["sha"] == "b" * 40
    counts = notes.counts()
    assert (counts.sent, counts.pending, counts.failed, counts.dead) == (1, 0, 0, 0)
    assert flush(database_url, clock, "--now") == f"sent 0, retrying 0, {COUNTS}; 0 taken out of backoff"
    assert len(hook.received) == 1  # sent once


def test_plain_flush_after_the_backoff_sends_as_before(
    database_url: str, clock: Clock, queued: tuple[NotifyStore, WebhookReceiver]
) -> None:
    notes, hook = queued
    flush(database_url, clock)
    hook.start()
    clock.now += timedelta(minutes=5)
    assert flush(database_url, clock) == f"sent 1, retrying 0, {COUNTS}"
    assert len(hook.received) == 1 and notes.in_backoff(clock()).count == 0
