"""The sender thread of `hubwatch run`, as a real process on the hub emulator: a new commit the
worker polls reaches a signed webhook exactly once; SIGTERM while a delivery is in flight lets it
finish and records it sent, with nothing marked failed and no lease left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from hubwatch.domain.records import RepoId
from hubwatch.notify.sender import notify_store
from hubwatch.notify.targets import new_secret
from hubwatch.notify.policy import NotifyPolicy
from hubwatch.storage import Store
from hubwatch.storage.notify.notify import SubscriptionSpec
from receivers import WebhookReceiver

QWEN = "google/gemma-2b-it"  # v2 changes the chat template


def _wait(what: str, ok: Callable[[], bool], proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ok():
            return
        assert proc.poll() is None, f"hubwatch run exited ({proc.returncode}) before {what}"
        time.sleep(0.1)
    raise AssertionError(f"no {what} within {timeout:g} s")


def test_run_delivers_once_and_sigterm_finishes_the_delivery_in_flight(hubsim: Any, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'run.db'}"
    fast, slow = WebhookReceiver().start(), WebhookReceiver(delay_s=3).start()
    repo = RepoId.parse(QWEN)
    with Store.open(db, notify=NotifyPolicy()) as store:
        store.watch(repo)
        notes = notify_store(store)
        subs = []
        for hook in (fast, slow):  # the fast one first: delivered first, in the same sweep
            hook.secret = new_secret()
            subs.append(notes.add(SubscriptionSpec(url=hook.url, secret=hook.secret, repos=(QWEN,))))
        env = {**os.environ, "HUBWATCH_DATABASE_URL": db, "HUBWATCH_HUB_ENDPOINT": hubsim.url, "HF_TOKEN": "",
               "HUBWATCH_POLL_INTERVAL_S": "10", "HUBWATCH_LEASE_S": "4", "HUBWATCH_NOTIFY_INTERVAL_S": "0.3",
               "HUBWATCH_NOTIFY_TIMEOUT_S": "10", "HUBWATCH_PUBLIC_URL": "https://hw.example"}  # fmt: skip
        proc = subprocess.Popen([sys.executable, "-m", "hubwatch", "run", "--no-web"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
        try:
            _wait("first poll (the baseline)", lambda: store.head(repo) is not None, proc)
            time.sleep(1)  # a few sweeps: a baseline says nothing
            assert fast.received == [] and slow.received == []
            sha = hubsim.advance(QWEN)
            _wait("signed delivery of the new commit", lambda: len(fast.received) == 1, proc)
            assert slow.arrived.wait(10), "the second subscription's delivery never started"
            proc.send_signal(signal.SIGTERM)  # while the slow endpoint holds its delivery
            rc = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
            fast.stop()
            slow.stop()
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        assert rc == 0, stderr
        for hook in (fast, slow):
            assert hook.rejected == []
            ((revision,),) = [body["data"]["revisions"] for body in hook.received]
            assert revision["repo"] == QWEN and revision["sha"] == sha and revision["changes"]
        assert len(set(fast.ids + slow.ids)) == 2
        rows = notes.messages()
        assert [(r["state"], r["attempts"], r["last_error"]) for r in rows] == [("sent", 0, None)] * 2
        assert {r["message_id"] for r in rows} == set(fast.ids + slow.ids)
        with store.engine.connect() as conn:
            leased = conn.execute(sa.text("SELECT count(*) FROM notify_outbox WHERE lease_owner IS NOT NULL")).scalar_one()
        assert leased == 0
        counts = notes.counts()
        assert (counts.sent, counts.pending, counts.failed, counts.dead) == (2, 0, 0, 0)
        assert "whsec_" not in stderr and "Traceback" not in stderr
