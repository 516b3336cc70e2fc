"""End to end through the commands: watch a repo on the hub emulator, subscribe, poll, the message
arrives (signed); a bad URL is refused at `notify add` with nothing stored; `--pins` tells only
about the pins a code base holds; kill -9 between the commit and the delivery loses nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from hubwatch.cli import cli
from receivers import WebhookReceiver

QWEN = "google/gemma-2b-it"  # v2 changes the chat template


def runner(db: Path, sim: Any = None, **extra: str):  # type: ignore[no-untyped-def]
    env = {"HUBWATCH_DATABASE_URL": f"sqlite:///{db}", "HF_TOKEN": "", "HUBWATCH_PUBLIC_URL": "https://hw.example",
           **({"HUBWATCH_HUB_ENDPOINT": sim.url} if sim is not None else {}), **extra}  # fmt: skip

    def invoke(*args: str) -> Result:
        import hubwatch.cli.commands  # noqa: F401 - registers the commands

        return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)

    return invoke


def test_bad_url_is_refused_and_nothing_stored(tmp_path: Path) -> None:
    invoke = runner(tmp_path / "hw.db")
    for url, says in [("nonsense://x", "not a valid Apprise URL"), ("slack://", "not a valid Apprise URL"),
                      ("http://example.com/hook", "use https://"), ("example.com", "is not a URL")]:  # fmt: skip
        bad = invoke("notify", "add", url)
        assert bad.exit_code == 2, bad.output
        assert says in bad.output
    assert json.loads(invoke("notify", "list", "--json").stdout) == []


def test_watch_poll_message_arrives_once(tmp_path: Path, hubsim: Any) -> None:
    invoke = runner(tmp_path / "hw.db", hubsim)
    hook = WebhookReceiver().start()
    try:
        added = invoke("notify", "add", hook.url, "--repo", QWEN)
        assert added.exit_code == 0, added.output
        hook.secret = added.stdout.strip().splitlines()[-1]
        assert hook.secret.startswith("whsec_")
        listed = json.loads(invoke("notify", "list", "--json").stdout)
        assert [s["target"] for s in listed] == [hook.url] and "whsec_" not in json.dumps(listed)
        assert invoke("watch", "add", QWEN).exit_code == 0
        assert invoke("poll").exit_code == 0  # the first revision: a baseline, nothing to say
        assert hook.received == []
        sha = hubsim.advance(QWEN)
        assert invoke("poll").exit_code == 0  # stores v2 and delivers what it queued
        assert invoke("poll").exit_code == 0 and invoke("notify", "flush").exit_code == 0
        assert hook.rejected == []
        (body,) = hook.received
        (revision,) = body["data"]["revisions"]
        assert revision["repo"] == QWEN and revision["sha"] == sha and revision["changes"]
        assert revision["links"]["revision"].startswith("https://hw.example/models/google/gemma-2b-it/revisions/")
        status = json.loads(invoke("notify", "status", "--json").stdout)
        assert (status["sent"], status["pending"], status["dead"]) == (1, 0, 0)
        assert "sent" in invoke("notify", "status").stdout
    finally:
        hook.stop()


def test_pins_only_what_affects_them(tmp_path: Path, database_url: str) -> None:
    from conftest import ADVISED_SHAS, fill_advised_store
    from hubwatch.notify.sender import Sender, notify_store
    from hubwatch.notify.targets import new_secret
    from hubwatch.settings import Settings
    from hubwatch.notify.policy import NotifyPolicy
    from hubwatch.storage import Store
    from hubwatch.storage.notify.notify import SubscriptionSpec

    at_l2, at_l1 = tmp_path / "at_l2", tmp_path / "at_l1"
    for folder, sha in ((at_l2, ADVISED_SHAS["L2"]), (at_l1, ADVISED_SHAS["L1"])):
        folder.mkdir()
        (folder / "load.py").write_text(textwrap.dedent(f"""\
            from transformers import AutoModel
            # the model we ship
            model = AutoModel.from_pretrained("acme/llama-small", revision="{sha}")
        """))
    hooks = [WebhookReceiver().start(), WebhookReceiver().start()]
    try:
        with Store.open(database_url, notify=NotifyPolicy()) as store:
            notes = notify_store(store)
            for hook, folder in zip(hooks, (at_l2, at_l1)):
                hook.secret = new_secret()
                notes.add(SubscriptionSpec(url=hook.url, secret=hook.secret, pins_path=str(folder),
                                           pin_repos=("acme/llama-small",)))  # fmt: skip
        fill_advised_store(database_url)  # L2 raises a pickle hazard, L3 fixes the chat template
        with Store.open(database_url, notify=NotifyPolicy()) as store:
            report = Sender(store, Settings(database_url="sqlite://")).flush()
        l2_bodies = [r for b in hooks[0].received for r in b["data"]["revisions"]]
        l1_bodies = [r for b in hooks[1].received for r in b["data"]["revisions"]]
    finally:
        for hook in hooks:
            hook.stop()
    # acme/tiny is not pinned: never queued. The L2 hazard affects the pin at L2 only; the L3
    # update (both pins lack it) both.
    assert [r["sha"] for r in l2_bodies] == [ADVISED_SHAS["L2"], ADVISED_SHAS["L3"]]
    assert [r["sha"] for r in l1_bodies] == [ADVISED_SHAS["L3"]]
    assert {p["where"] for r in l2_bodies for p in r["pins"]} == {"load.py:3"}
    assert all(r["advisories"] for r in l2_bodies + l1_bodies)
    assert report.skipped == 1 and report.sent == 3


def test_kill9_between_commit_and_delivery_delivers_once(tmp_path: Path, database_url: str) -> None:
    from hubwatch.notify.sender import Sender, notify_store
    from hubwatch.notify.targets import new_secret
    from hubwatch.settings import Settings
    from hubwatch.notify.policy import NotifyPolicy
    from hubwatch.storage import Store
    from hubwatch.storage.notify.notify import SubscriptionSpec

    hook = WebhookReceiver().start()
    hook.secret = new_secret()
    with Store.open(database_url, notify=NotifyPolicy()) as store:
        notify_store(store).add(SubscriptionSpec(url=hook.url, secret=hook.secret))
    child = textwrap.dedent(f"""\
        import sys, time
        from datetime import datetime, timezone
        from hubwatch.domain.records import ChangeRecord, Direction, Kind, RepoId, RevisionRecord, Severity
        from hubwatch.notify.policy import NotifyPolicy
        from hubwatch.storage import Store
        repo = RepoId("acme", "model")
        store = Store.open({database_url!r}, notify=NotifyPolicy())
        store.watch(repo)
        day = datetime(2026, 3, 1, tzinfo=timezone.utc)
        store.save_revision(repo, RevisionRecord("a" * 40, None, day, "first"), [], {{}}, [], None, [])
        change = ChangeRecord(Kind.PICKLE, Severity.HIGH, "model.bin", "a pickle appeared", {{}}, Direction.HAZARD)
        store.save_revision(repo, RevisionRecord("b" * 40, "a" * 40, day, "second"), [], {{}}, [change], None, [])
        print("committed", flush=True)
        time.sleep(60)  # the sender would run now: killed before it does
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "committed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        assert hook.received == []
        with Store.open(database_url, notify=NotifyPolicy()) as store:  # the restart
            assert Sender(store, Settings(database_url="sqlite://")).flush().sent == 1
            assert Sender(store, Settings(database_url="sqlite://")).flush().total == 0
        assert len(hook.received) == 1 and hook.received[0]["data"]["revisions"][0]["sha"] == "b" * 40
    finally:
        if proc.poll() is None:
            proc.kill()
        hook.stop()


def test_notify_test_sends_now_and_queues_nothing(tmp_path: Path) -> None:
    from receivers import Mailbox

    invoke = runner(tmp_path / "hw.db")
    hook, box = WebhookReceiver().start(), Mailbox()
    try:
        added = invoke("notify", "add", hook.url)
        assert added.exit_code == 0, added.output
        hook.secret = added.stdout.strip().splitlines()[-1]
        assert invoke("notify", "add", box.url()).exit_code == 0
        for sub_id in ("1", "2"):
            sent = invoke("notify", "test", sub_id)
            assert sent.exit_code == 0, sent.output
            assert "sent a test message to" in sent.stdout
        assert hook.rejected == []
        ((revision,),) = [b["data"]["revisions"] for b in hook.received]
        assert revision["test"] is True and revision["title"] == "hubwatch test message"
        ((_, to, mail),) = box.messages
        assert to == ["ops@example.com"] and "hubwatch test message" in mail
        # nothing queued: not counted, not delivered again as a real message
        status = json.loads(invoke("notify", "status", "--json").stdout)
        assert {k: status[k] for k in ("pending", "sent", "failed", "dead", "skipped")} == dict.fromkeys(
            ("pending", "sent", "failed", "dead", "skipped"), 0
        ) and status["by_subscription"] == {}
        assert "sent 0," in invoke("notify", "flush").stdout
        assert len(hook.received) == 1 and len(box.messages) == 1
        # a second test is a new message (its own webhook-id), not a retry of the first
        assert invoke("notify", "test", "1").exit_code == 0
        assert len(set(hook.ids)) == 2
    finally:
        hook.stop()
        box.stop()
    # both targets down: exit 1 with the target's own error, still nothing queued
    down = invoke("notify", "test", "1")
    assert down.exit_code == 1
    assert f"webhook {hook.url}: ConnectError" in down.output
    mail_down = invoke("notify", "test", "2")
    said = " ".join(mail_down.output.split())  # the console wraps long lines
    assert mail_down.exit_code == 1 and 'Connection error while submitting email to "127.0.0.1"' in said
    assert json.loads(invoke("notify", "status", "--json").stdout)["by_subscription"] == {}
    missing = invoke("notify", "test", "9")
    assert missing.exit_code == 2 and "no subscription 9" in missing.output
