"""Delivery: a real SMTP server and a signing-verifying webhook receiver get the messages a poll
queues, once; a receiver down gets them when back; dead after the attempts; rate limit; leases."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hubwatch.domain.records import ChangeRecord, Direction, Kind, RepoId, RevisionRecord, Severity
from hubwatch.notify.sender import Sender, notify_store
from hubwatch.notify.targets import new_secret
from hubwatch.settings import Settings
from hubwatch.notify.policy import NotifyPolicy
from hubwatch.storage import Store
from hubwatch.storage.notify.notify import NotifyStore, Subscription, SubscriptionSpec
from receivers import Mailbox, WebhookReceiver

REPO = RepoId("acme", "model")
PUBLIC = "https://hubwatch.example"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def opened(database_url: str, clock: Clock) -> Iterator[Store]:
    with Store.open(database_url, clock, notify=NotifyPolicy()) as store:
        store.watch(REPO)
        assert store.save_revision(REPO, RevisionRecord("a" * 40, None, clock(), "first"), [], {}, [], None, [])
        yield store


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    hook = WebhookReceiver().start()
    yield hook
    hook.stop()


def settings(**extra: Any) -> Settings:
    return Settings(**{"database_url": "sqlite://", "public_url": PUBLIC, "notify_timeout_s": 3, **extra})


def subscribe(store: Store, clock: Clock, url: str, **spec: Any) -> tuple[NotifyStore, Subscription]:
    notes = notify_store(store, clock)
    return notes, notes.add(SubscriptionSpec(url=url, **spec))


def commit(store: Store, sha: str, parent: str, title: str = "swap the weights <b>*now*</b>",
           severity: Severity = Severity.HIGH) -> bool:  # fmt: skip
    change = ChangeRecord(Kind.PICKLE, severity, "pytorch_model.bin", "a pickle file appeared", {}, Direction.HAZARD)
    return store.save_revision(REPO, RevisionRecord(sha, parent, datetime(2026, 3, 1, tzinfo=UTC), title),
                               [], {}, [change], None, [])  # fmt: skip


def test_signed_webhook_once_with_content(opened: Store, clock: Clock, receiver: WebhookReceiver) -> None:
    secret = new_secret()
    receiver.secret = secret
    notes, sub = subscribe(opened, clock, receiver.url, secret=secret)
    assert commit(opened, "b" * 40, "a" * 40)
    assert notes.counts().pending == 1  # queued in the revision's transaction, nothing sent yet
    assert receiver.received == []
    report = Sender(opened, settings(), clock=clock).flush()
    assert report.sent == 1 and receiver.rejected == []
    (body,) = receiver.received
    assert body["type"] == "hubwatch.changes"
    (revision,) = body["data"]["revisions"]
    assert revision["repo"] == "acme/model" and revision["sha"] == "b" * 40
    assert revision["worst_severity"] == "high" and revision["changes"][0]["kind"] == "pickle"
    assert revision["links"]["revision"] == f"{PUBLIC}/models/acme/model/revisions/{'b' * 40}"
    # a second sweep, a replayed save and a re-poll send nothing more
    assert Sender(opened, settings(), clock=clock).flush().total == 0
    assert not commit(opened, "b" * 40, "a" * 40)
    assert Sender(opened, settings(), clock=clock).flush().total == 0
    assert len(receiver.received) == 1
    counts = notes.counts()
    assert (counts.pending, counts.sent, counts.by_subscription[sub.id]["sent"]) == (0, 1, 1)


def test_wrong_secret_is_rejected_by_the_verifier(opened: Store, clock: Clock, receiver: WebhookReceiver) -> None:
    receiver.secret = new_secret()
    notes, _ = subscribe(opened, clock, receiver.url, secret=new_secret())
    commit(opened, "b" * 40, "a" * 40)
    report = Sender(opened, settings(), clock=clock).flush()
    assert report.retried == 1 and receiver.received == [] and receiver.rejected == ["No matching signature found"]
    (row,) = notes.messages()
    assert row["state"] == "pending" and row["attempts"] == 1 and "HTTP 400" in row["last_error"]


def test_mail_arrives_over_real_smtp_as_plain_text(opened: Store, clock: Clock) -> None:
    box = Mailbox()
    try:
        subscribe(opened, clock, box.url())
        commit(opened, "b" * 40, "a" * 40)
        assert Sender(opened, settings(), clock=clock).flush().sent == 1
        ((sender, to, mail),) = box.messages
    finally:
        box.stop()
    assert sender == "hubwatch@example.com" and to == ["ops@example.com"]
    assert "Content-Type: text/plain" in mail
    assert "[HIGH] acme/model: swap the weights <b>*now*</b>" in mail  # the subject, text as is
    assert "pickle" in mail and f"{PUBLIC}/models/acme/model/revisions/" in mail.replace("=\n", "")


def test_receiver_down_then_back_delivers_with_backoff(opened: Store, clock: Clock) -> None:
    hook = WebhookReceiver()
    hook.secret = secret = new_secret()
    notes, _ = subscribe(opened, clock, hook.url, secret=secret)
    commit(opened, "b" * 40, "a" * 40)
    sender = Sender(opened, settings(notify_backoff_s=30), clock=clock)
    assert sender.flush().retried == 1  # connection refused
    (row,) = notes.messages()
    assert row["attempts"] == 1 and row["due_at"] == clock() + timedelta(seconds=30)
    hook.start()
    try:
        assert sender.flush().total == 0  # not due yet: the backoff holds
        clock.now += timedelta(seconds=31)
        assert sender.flush().sent == 1
        assert len(hook.received) == 1
    finally:
        hook.stop()
    assert notes.counts().sent == 1


def test_dead_after_max_attempts(opened: Store, clock: Clock) -> None:
    hook = WebhookReceiver()  # never started
    notes, _ = subscribe(opened, clock, hook.url, secret=new_secret())
    commit(opened, "b" * 40, "a" * 40)
    sender = Sender(opened, settings(notify_max_attempts=3, notify_backoff_s=10), clock=clock)
    waits = []
    for _ in range(3):
        before = clock.now
        sender.flush()
        (row,) = notes.messages()
        waits.append((row["due_at"] - before).total_seconds())
        clock.now += timedelta(hours=1)
    counts = notes.counts()
    assert (counts.dead, counts.pending, counts.failed) == (1, 0, 0)
    assert waits[:2] == [10.0, 20.0]  # exponential
    assert sender.flush().total == 0


def test_rate_limit_groups_the_rest(opened: Store, clock: Clock, receiver: WebhookReceiver) -> None:
    receiver.secret = secret = new_secret()
    notes, _ = subscribe(opened, clock, receiver.url, secret=secret)
    parent = "a" * 40
    for i in range(5):
        sha = f"{i + 1:x}" * 40
        commit(opened, sha, parent, title=f"commit {i}")
        parent = sha
    assert Sender(opened, settings(notify_rate_per_hour=2), clock=clock).flush().sent == 2
    sizes = [len(b["data"]["revisions"]) for b in receiver.received]
    assert sizes == [1, 4]
    assert notes.counts().sent == 5
    commit(opened, "9" * 40, parent)  # the hour is spent: postponed, not lost
    assert Sender(opened, settings(notify_rate_per_hour=2), clock=clock).flush().postponed == 1
    clock.now += timedelta(hours=1, seconds=2)
    assert Sender(opened, settings(notify_rate_per_hour=2), clock=clock).flush().sent == 1
    assert len(receiver.received) == 3


def test_digest_waits_for_the_period_and_sends_one(opened: Store, clock: Clock, receiver: WebhookReceiver) -> None:
    receiver.secret = secret = new_secret()
    subscribe(opened, clock, receiver.url, secret=secret, digest="daily")
    commit(opened, "b" * 40, "a" * 40)
    commit(opened, "c" * 40, "b" * 40)
    sender = Sender(opened, settings(), clock=clock)
    assert sender.flush().total == 0
    clock.now = datetime(2026, 3, 3, 0, 0, tzinfo=UTC)
    assert sender.flush().sent == 1
    (body,) = receiver.received
    assert body["data"]["digest"] == "daily" and [r["sha"] for r in body["data"]["revisions"]] == ["b" * 40, "c" * 40]


def test_filters_choose_who_is_told(opened: Store, clock: Clock) -> None:
    notes = notify_store(opened, clock)
    url = "json://127.0.0.1:9/"
    wanted = [notes.add(SubscriptionSpec(url=url, repos=("ACME/Model",))),
              notes.add(SubscriptionSpec(url=url, orgs=("acme",), kinds=("pickle",))),
              notes.add(SubscriptionSpec(url=url, min_severity=Severity.HIGH))]  # fmt: skip
    unwanted = [notes.add(SubscriptionSpec(url=url, repos=("other/model",))),
                notes.add(SubscriptionSpec(url=url, kinds=("license",))),
                notes.add(SubscriptionSpec(url=url, min_severity=Severity.CRITICAL))]  # fmt: skip
    commit(opened, "b" * 40, "a" * 40)
    queued = {int(r["subscription_id"]) for r in notes.messages()}
    assert queued == {s.id for s in wanted} and not queued & {s.id for s in unwanted}


def test_two_senders_never_claim_the_same_message(opened: Store, clock: Clock) -> None:
    notes, _ = subscribe(opened, clock, "json://127.0.0.1:9/")
    parent = "a" * 40
    for i in range(6):
        sha = f"{i + 1:x}" * 40
        commit(opened, sha, parent)
        parent = sha
    first = notes.claim("w1", clock(), 4, 60)
    second = notes.claim("w2", clock(), 10, 60)
    assert len(first) == 4 and len(second) == 2 and not {m.id for m in first} & {m.id for m in second}
    assert notes.claim("w3", clock(), 10, 60) == []
    clock.now += timedelta(seconds=61)  # the leases of a crashed sender expire
    assert len(notes.claim("w3", clock(), 10, 60)) == 6
    assert notes.mark_sent([first[0].id], "w1", clock(), "msg_w1") == 0  # w1 lost its lease: it records nothing


def test_a_claimed_message_hands_back_its_worst_severity_as_the_domain_value(opened: Store, clock: Clock) -> None:
    notes, _ = subscribe(opened, clock, "json://127.0.0.1:9/")
    commit(opened, "b" * 40, "a" * 40, severity=Severity.CRITICAL)
    commit(opened, "c" * 40, "b" * 40, severity=Severity.LOW)
    first, second = notes.claim("w1", clock(), 10, 60)
    assert first.payload["worst_severity"] is Severity.CRITICAL and second.payload["worst_severity"] is Severity.LOW


def test_a_stored_severity_that_is_no_severity_comes_back_as_none() -> None:
    from hubwatch.storage.notify.notify import typed_payload

    assert typed_payload({"worst_severity": "high"})["worst_severity"] is Severity.HIGH
    for stored in ("severe", "HIGH", 3, None, ["high"]):
        assert typed_payload({"worst_severity": stored, "title": "t"}) == {"worst_severity": None, "title": "t"}
    assert typed_payload({"title": "t"}) == {"title": "t"}  # a payload without one keeps its keys


def test_removed_subscription_takes_its_messages(opened: Store, clock: Clock, tmp_path: Path) -> None:
    notes, sub = subscribe(opened, clock, "json://127.0.0.1:9/")
    commit(opened, "b" * 40, "a" * 40)
    assert notes.remove(sub.id) and not notes.remove(sub.id)
    assert notes.messages() == [] and notes.subscriptions() == []


def test_rate_limit_counts_messages_by_their_id(opened: Store, clock: Clock, receiver: WebhookReceiver) -> None:
    """Each delivery has its own message id; the limit counts distinct ids in the hour, however
    coarse the clock (here it stands still) and however many senders deliver."""
    receiver.secret = secret = new_secret()
    notes, sub = subscribe(opened, clock, receiver.url, secret=secret)
    parent = "a" * 40
    for i in range(3):
        sha = f"{i + 1:x}" * 40
        commit(opened, sha, parent, title=f"commit {i}")
        parent = sha
        # a fresh sender (another process) each time, all at the same instant
        assert Sender(opened, settings(notify_rate_per_hour=2), clock=clock).flush().sent == (1 if i < 2 else 0)
    assert len(receiver.received) == 2
    assert notes.sent_since([sub.id], clock() - timedelta(hours=1))[sub.id] == (2, clock())
    rows = {r["sha"]: r for r in notes.messages()}
    assert rows["3" * 40]["state"] == "pending" and rows["3" * 40]["due_at"] > clock()
    assert [rows[s]["message_id"] for s in ("1" * 40, "2" * 40)] == receiver.ids
    assert len(set(receiver.ids)) == 2


def test_a_grouped_message_counts_once(opened: Store, clock: Clock, receiver: WebhookReceiver) -> None:
    receiver.secret = secret = new_secret()
    notes, sub = subscribe(opened, clock, receiver.url, secret=secret)
    parent = "a" * 40
    for i in range(4):
        sha = f"{i + 1:x}" * 40
        commit(opened, sha, parent, title=f"commit {i}")
        parent = sha
    assert Sender(opened, settings(notify_rate_per_hour=3), clock=clock).flush().sent == 3  # 1, 1, then 2 grouped
    assert [len(b["data"]["revisions"]) for b in receiver.received] == [1, 1, 2]
    assert notes.sent_since([sub.id], clock() - timedelta(hours=1))[sub.id][0] == 3
    grouped = [r for r in notes.messages() if r["message_id"] == receiver.ids[2]]
    assert sorted(r["sha"] for r in grouped) == ["3" * 40, "4" * 40]


def test_a_target_that_never_answers_is_bounded_by_the_timeout(opened: Store, clock: Clock) -> None:
    """A json:// target on a loopback socket that accepts and never responds holds the sender no
    longer than HUBWATCH_NOTIFY_TIMEOUT_S (connect and read); the message is retried, not lost."""
    import socket
    import threading
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True).start()
    try:
        notes, _ = subscribe(opened, clock, f"json://127.0.0.1:{listener.getsockname()[1]}/")
        commit(opened, "b" * 40, "a" * 40)
        started = time.monotonic()
        report = Sender(opened, settings(notify_timeout_s=1), clock=clock).flush()
        took = time.monotonic() - started
    finally:
        for conn in held:
            conn.close()
        listener.close()
    assert held, "the target never saw the connection"
    assert report.retried == 1 and took < 2 * 1 + 2, took
    (row,) = notes.messages()
    assert row["state"] == "pending" and row["attempts"] == 1 and "json://127.0.0.1" in row["last_error"]


def test_a_digest_mail_is_plain_text_and_a_webhook_digest_holds_every_revision(opened: Store, clock: Clock) -> None:
    box = Mailbox()
    try:
        subscribe(opened, clock, box.url(), digest="daily")
        commit(opened, "b" * 40, "a" * 40, title="first *bold* [x](y)")
        commit(opened, "c" * 40, "b" * 40, title="second_one")
        clock.now = datetime(2026, 3, 3, 0, 0, tzinfo=UTC)
        assert Sender(opened, settings(), clock=clock).flush().sent == 1
        ((_, _, mail),) = box.messages
    finally:
        box.stop()
    body = mail.replace("=\n", "")
    assert "Content-Type: text/plain" in mail and "[HIGH] hubwatch daily digest: 2 revisions in 1 repo" in body
    # plain text: the titles as written, no Markdown markup or escapes
    assert "acme/model @ bbbbbbbbbbbb: first *bold* [x](y)" in body and "second_one" in body
    assert "**" not in body and "\\_" not in body and "\\*" not in body


def test_a_grouped_message_renders_markdown_for_chat_targets() -> None:
    from hubwatch.notify.message import render

    payloads = [{"repo": "acme/model", "sha": s * 40, "title": t, "worst_severity": Severity.HIGH, "changes": [],
                 "changes_total": 0, "advisories": []} for s, t in (("b", "first *bold*"), ("c", "second_one"))]  # fmt: skip
    out = render(payloads, PUBLIC, "1:group:1,2")
    assert out.title == "[HIGH] hubwatch 2 revisions in 1 repo"
    assert "**acme/model** — [first \\*bold\\*]" in out.markdown and "second\\_one" in out.markdown
    assert "first *bold*" in out.text and "**" not in out.text


def test_a_dataset_revision_links_the_dataset_page(opened: Store, clock: Clock, receiver: WebhookReceiver) -> None:
    dataset = RepoId.parse("datasets/acme/model")  # a dataset of the model's org/name: its own page
    secret = new_secret()
    receiver.secret = secret
    subscribe(opened, clock, receiver.url, secret=secret, repos=(str(dataset),))
    opened.watch(dataset)
    when = datetime(2026, 3, 1, tzinfo=UTC)
    assert opened.save_revision(dataset, RevisionRecord("c" * 40, None, when, "upload"), [], {}, [], None, [])
    change = ChangeRecord(Kind.SPLITS, Severity.HIGH, "README.md:dataset_info.default.splits.test",
                          "default/test: 20 → 30 rows", {}, Direction.HAZARD)
    assert opened.save_revision(dataset, RevisionRecord("d" * 40, "c" * 40, when, "more test rows"),
                                [], {}, [change], None, [])
    assert commit(opened, "b" * 40, "a" * 40)  # the model's revision: not this subscription's
    assert Sender(opened, settings(), clock=clock).flush().sent == 1
    (body,) = receiver.received
    (revision,) = body["data"]["revisions"]
    assert revision["repo"] == "datasets/acme/model" and revision["changes"][0]["kind"] == "splits"
    assert revision["links"]["revision"] == f"{PUBLIC}/datasets/acme/model/revisions/{'d' * 40}"
