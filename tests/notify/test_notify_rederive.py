"""Re-derivation (a new advisory model): an advisory it raises for the first time is announced
once; an advisory already stored — announced with its revision — is never announced again, however
often the re-derivation runs; a withdrawn one is not news."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hubwatch.advisories.advise import plan_advisories
from hubwatch.domain.records import ChangeRecord, Direction, Kind, RepoId, RevisionRecord, Severity
from hubwatch.notify.sender import Sender, notify_store
from hubwatch.notify.targets import new_secret
from hubwatch.settings import Settings
from hubwatch.notify.policy import NotifyPolicy
from hubwatch.storage import Store
from hubwatch.storage.notify.notify import SubscriptionSpec
from receivers import WebhookReceiver

REPO = RepoId("acme", "model")
NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
B, C = "b" * 40, "c" * 40


def test_rederived_advisories_announced_once(database_url: str) -> None:
    settings = Settings(database_url="sqlite://", public_url="https://hw.example", notify_timeout_s=3)
    hook = WebhookReceiver().start()
    hook.secret = secret = new_secret()
    try:
        with Store.open(database_url, lambda: NOW, notify=NotifyPolicy()) as store:
            notes = notify_store(store, lambda: NOW)
            sub = notes.add(SubscriptionSpec(url=hook.url, secret=secret))
            strict = notes.add(SubscriptionSpec(url="json://127.0.0.1:9/", min_severity=Severity.CRITICAL))
            store.watch(REPO)
            first = RevisionRecord("a" * 40, None, NOW, "first")
            assert store.save_revision(REPO, first, [], {}, [], None, [])
            pickle = ChangeRecord(Kind.PICKLE, Severity.HIGH, "model.bin", "a pickle appeared", {}, Direction.HAZARD)
            second = RevisionRecord(B, first.sha, NOW, "second")
            (raised,) = plan_advisories(REPO, second, [pickle], [], settings)
            assert store.save_revision(REPO, second, [], {}, [pickle], None, [raised])
            # the old model raised nothing for a licence change in the third revision
            licence = ChangeRecord(Kind.LICENSE, Severity.HIGH, "README.md", "licence: mit → other", {},
                                   Direction.HAZARD)  # fmt: skip
            third = RevisionRecord(C, B, NOW, "third")
            assert store.save_revision(REPO, third, [], {}, [licence], None, [])
            assert Sender(store, settings, clock=lambda: NOW).flush().sent == 2  # the revisions, b with its advisory

            # the model changes and re-derives: the stored advisory again (modified later), nothing new
            store.revisions.replace_derived(REPO, {}, [replace(raised, modified=NOW + timedelta(days=1))])
            assert len(notes.messages()) == 2

            # the newer model raises an advisory for the licence change: announced once
            (found,) = [a for a in plan_advisories(REPO, third, [licence], [raised], settings) if a.id != raised.id]
            for _ in range(3):  # a re-derivation that is run again (another worker, a restart) adds nothing
                store.revisions.replace_derived(REPO, {}, [raised, found])
            queued = [r for r in notes.messages() if r["state"] == "pending"]
            assert [(r["subscription_id"], r["key"]) for r in queued] == [(sub.id, f"{sub.id}:advisory:{found.id}")]
            assert strict.id not in {r["subscription_id"] for r in notes.messages()}  # the filters hold
            assert Sender(store, settings, clock=lambda: NOW).flush().sent == 1
            store.revisions.replace_derived(REPO, {}, [raised, found])
            assert Sender(store, settings, clock=lambda: NOW).flush().total == 0

            # a record withdrawn as it first appears is no news
            gone = replace(found, id=found.id + "-x", withdrawn=NOW)
            store.revisions.replace_derived(REPO, {}, [gone])
            assert len(notes.messages()) == 3
    finally:
        hook.stop()
    assert hook.rejected == [] and len(hook.received) == 3
    assert [b["data"]["revisions"][0]["advisories"] for b in hook.received[1:2]] == [[]]
    revision = hook.received[2]["data"]["revisions"][0]
    assert revision["sha"] == C and revision["rederived"] is True and revision["title"] == "third"
    assert [a["id"] for a in revision["advisories"]] == [found.id]
    assert [a["id"] for a in hook.received[0]["data"]["revisions"][0]["advisories"]] == [raised.id]
