"""An inherited advisory is news: the derivatives pass that raises it enqueues it once per matching
subscription (in the transaction that stores it), delivered as a signed Standard Webhook; checking
again, or the derivative closing it, sends nothing more."""

from __future__ import annotations

import sys
from pathlib import Path

from derivatives_scenario import BASE, FIXED, STALE, Scenario, scenario  # noqa: F401  (the fixture)

from hubwatch.advisories.inherit import is_inherited
from hubwatch.notify.sender import Sender, notify_store
from hubwatch.notify.targets import new_secret
from hubwatch.storage.notify.notify import SubscriptionSpec
from hubwatch.tracker.derivatives import check_inheritance

sys.path.append(str(Path(__file__).parents[1] / "notify"))  # the notify tests' loopback receivers
from receivers import WebhookReceiver  # noqa: E402


def test_an_inherited_advisory_is_announced_once(scenario: Scenario) -> None:
    hook = WebhookReceiver().start()
    hook.secret = secret = new_secret()
    try:
        notes = notify_store(scenario.store)
        sub = notes.add(SubscriptionSpec(url=hook.url, secret=secret, repos=(str(STALE).lower(),)))
        other = notes.add(SubscriptionSpec(url="json://127.0.0.1:9/", repos=(str(FIXED).lower(),)))
        scenario.advance(BASE)  # the base's fix, then the scenario pass raises the stale one's advisory
        (inherited,) = [r for r in scenario.store.advisories.records(STALE) if is_inherited(r.osv)]
        queued = [(m["subscription_id"], m["key"]) for m in notes.messages()]
        assert queued == [(sub.id, f"{sub.id}:advisory:{inherited.id}")]
        assert other.id not in {m["subscription_id"] for m in notes.messages()}  # the filters hold
        settings = scenario.settings.model_copy(update={"notify_timeout_s": 3})
        assert Sender(scenario.store, settings).flush().sent == 1

        check_inheritance(scenario.store, scenario.settings, force=True)  # a re-run: nothing twice
        assert Sender(scenario.store, settings).flush().total == 0
        fix = scenario.advance(STALE)  # the derivative takes the fix: its revision is news, the closing is not
        keys = sorted(m["key"] for m in notes.messages())
        assert keys == sorted([f"{sub.id}:advisory:{inherited.id}", f"{sub.id}:{str(STALE).lower()}@{fix}"])
    finally:
        hook.stop()
    assert hook.rejected == [] and len(hook.received) == 1
    (revision,) = hook.received[0]["data"]["revisions"]  # signed, verified by the receiver
    assert revision["repo"] == str(STALE) and revision["inherited"] is True and "rederived" not in revision
    (advisory,) = revision["advisories"]
    assert advisory["id"] == inherited.id and advisory["upstream"] == inherited.osv["upstream"]
