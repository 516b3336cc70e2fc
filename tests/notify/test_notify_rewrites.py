"""A force-push upstream reaches subscribers once: by its first new revision's message when it
brings commits (a squash's new root included), by a message of its own when it brings none; a
`--pins` subscription hears of it only for a pin on a dropped commit, told where to move (as
`hubwatch check` tells it). Real rewrites of the emulator, polled by the tracker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hubwatch.domain.records import RepoId, Severity
from hubwatch.notify.message import render
from hubwatch.notify.pins import pin_repos
from hubwatch.notify.sender import Sender, notify_store
from hubwatch.notify.targets import new_secret
from hubwatch.settings import Settings
from hubwatch.notify.policy import NotifyPolicy
from hubwatch.storage import Store
from hubwatch.storage.notify.notify import SubscriptionSpec
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import NewRevisions, Unchanged, poll_repos
from receivers import WebhookReceiver

REPO = RepoId.parse("meta-llama/Llama-2-7b-hf")  # 12 commits in the bundled history
PUBLIC = "https://hw.example"


def poll(sim: Any, store: Store) -> Any:
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url)
    (outcome,) = poll_repos([REPO], hub=HubClient.from_settings(settings), store=store, settings=settings)
    return outcome


def hook() -> WebhookReceiver:
    receiver = WebhookReceiver().start()
    receiver.secret = new_secret()
    return receiver


def project(root: Path, shas: dict[str, str]) -> Path:
    root.mkdir()
    (root / "app.py").write_text("".join(f'AutoModel.from_pretrained("{REPO}", revision="{sha}")  # {name}\n'
                                         for name, sha in shas.items()))
    return root


def _backfilled_and_subscribed(
    sim: Any, store: Store, receivers: dict[str, WebhookReceiver], tmp_path: Path, pinned: str
) -> list[str]:
    """REPO's whole history stored, then four subscriptions: "all" of REPO, "high" (min severity
    high), `pinned` (a project pinning v4 and, at `app.py:2`, v11) and "kept pins" (v4 only).
    The stored shas, oldest first."""
    store.watch(REPO)
    assert isinstance(poll(sim, store), NewRevisions)
    line = store.revisions.revision_shas(REPO)
    assert line is not None and len(line) == 12
    notes = notify_store(store)

    def add(name: str, **spec: Any) -> None:
        notes.add(SubscriptionSpec(url=receivers[name].url, secret=receivers[name].secret, **spec))

    add("all", repos=(str(REPO),))
    add("high", repos=(str(REPO),), min_severity=Severity.HIGH)
    for name, pins in ((pinned, {"kept": line[3], "v11": line[10]}), ("kept pins", {"kept": line[3]})):
        root = project(tmp_path / name.replace(" ", "_"), pins)
        add(name, pins_path=str(root), pin_repos=tuple(pin_repos(root)))
    return line


def test_a_rewind_is_announced_once_and_to_the_pins_it_dropped(
    hubsim_factory: Any, database_url: str, tmp_path: Path
) -> None:
    sim = hubsim_factory(at=None)
    receivers = {name: hook() for name in ("all", "high", "dropped pin", "kept pins")}
    try:
        with Store.open(database_url, notify=NotifyPolicy()) as store:
            line = _backfilled_and_subscribed(sim, store, receivers, tmp_path, "dropped pin")
            notes = notify_store(store)

            sim.rewind(str(REPO), "v10")  # v11 and v12 leave the main line
            poll(sim, store)
            (rewrite,) = store.revisions.rewrites(REPO)
            assert rewrite.dropped == tuple(line[10:]) and rewrite.new_head == line[9]
            poll(sim, store)  # nothing new upstream: nothing queued again
            report = Sender(store, Settings(database_url="sqlite://", public_url=PUBLIC, notify_timeout_s=5)).flush()
            assert (report.sent, report.skipped) == (2, 1), report  # "high" filters it; "kept pins" has none dropped
            assert receivers["high"].received == [] and receivers["kept pins"].received == []

            (body,) = receivers["all"].received
            (message,) = body["data"]["revisions"]
            assert message["repo"] == str(REPO) and message["sha"] == line[9]
            assert message["rewrite"] == {"old_head": line[11], "new_head": line[9], "dropped": line[10:]}
            assert "history rewritten upstream: 2 stored revisions no longer on the main line" in message["title"]
            assert "pins" not in message

            (pinned,) = receivers["dropped pin"].received
            (told,) = pinned["data"]["revisions"]
            assert told["pins"] == [{"dropped": True, "where": "app.py:2", "revision": line[10], "move_to": line[9]}]
            text = render([told], PUBLIC, "k").markdown
            assert text.count("history rewritten upstream") == 1 and "…and" not in text
            assert (f"your pin at `app.py:2` is on {line[10][:12]}, a commit upstream dropped — move to "
                    f"[{line[9][:12]}]({PUBLIC}/models/{REPO}/revisions/{line[9]})") in text
            assert notes.counts().pending == 0
    finally:
        for receiver in receivers.values():
            receiver.stop()


def test_a_squash_is_told_by_its_new_root_once(hubsim_factory: Any, database_url: str) -> None:
    """The squashed commit has no parent, but it is no repo's first revision: it carries the
    force-push (compared with the old head), so its message says so, once; no second message."""
    sim = hubsim_factory(at=None)
    receiver = hook()
    try:
        with Store.open(database_url, notify=NotifyPolicy()) as store:
            store.watch(REPO)
            poll(sim, store)
            line = store.revisions.revision_shas(REPO)
            assert line is not None
            notify_store(store).add(SubscriptionSpec(url=receiver.url, secret=receiver.secret))
            squashed = sim.squash(str(REPO))
            poll(sim, store)
            assert Sender(store, Settings(database_url="sqlite://", public_url=PUBLIC, notify_timeout_s=5)).flush().sent == 1
            (body,) = receiver.received
            (message,) = body["data"]["revisions"]
            assert message["sha"] == squashed and message["parent"] is None and "rewrite" not in message
            assert any(c["summary"].startswith(f"history rewritten: {len(line)} earlier revisions")
                       for c in message["changes"]), message["changes"]
    finally:
        receiver.stop()


def _history(root: Path, contents: list[str]) -> Path:
    """acme/forked with one commit per entry (equal entries at one place: equal commits)."""
    for number, content in enumerate(contents, start=1):
        folder = root / "acme__forked" / f"v{number}"
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(
            '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, '
            f'"intermediate_size": 128, "vocab_size": 1000, "transformers_version": "{content}"}}')
    return root


def test_a_push_with_new_commits_is_told_by_its_first_new_revision(
    hubsim_factory: Any, database_url: str, tmp_path: Path
) -> None:
    """The top commit replaced: the new revision's message carries the rewrite among its changes, and
    no second message repeats it."""
    forked = RepoId("acme", "forked")
    receiver = hook()
    try:
        with Store.open(database_url, notify=NotifyPolicy()) as store:
            store.watch(forked)
            first = hubsim_factory(root=_history(tmp_path / "a", ["4.0", "4.1", "4.2"]), at=None)
            settings = Settings(database_url="sqlite://", hub_endpoint=first.url)
            poll_repos([forked], hub=HubClient.from_settings(settings), store=store, settings=settings)
            first.stop()
            notify_store(store).add(SubscriptionSpec(url=receiver.url, secret=receiver.secret))
            pushed = hubsim_factory(root=_history(tmp_path / "b", ["4.0", "4.1", "4.9"]), at=None)
            settings = Settings(database_url="sqlite://", hub_endpoint=pushed.url)
            (outcome,) = poll_repos([forked], hub=HubClient.from_settings(settings), store=store, settings=settings)
            assert isinstance(outcome, NewRevisions) and len(store.revisions.rewrites(forked)) == 1
            assert Sender(store, Settings(database_url="sqlite://", public_url=PUBLIC, notify_timeout_s=5)).flush().sent == 1
            (body,) = receiver.received
            (message,) = body["data"]["revisions"]
            assert message["sha"] == outcome.shas[0] and "rewrite" not in message
            assert any(c["summary"].startswith("history rewritten: 1 earlier revision") for c in message["changes"])
    finally:
        receiver.stop()


def test_commits_pushed_back_after_a_rewind_are_announced_once_and_to_their_pins(
    hubsim_factory: Any, database_url: str, tmp_path: Path
) -> None:
    """Upstream rewinds, then pushes a dropped commit back (no new commit: the head moves onto one
    stored before): subscribers hear it is back on the main line, once; a `--pins` subscription only
    for a pin on it, whose earlier message told it to move away."""
    sim = hubsim_factory(at=None)
    receivers = {name: hook() for name in ("all", "high", "restored pin", "kept pins")}
    try:
        with Store.open(database_url, notify=NotifyPolicy()) as store:
            line = _backfilled_and_subscribed(sim, store, receivers, tmp_path, "restored pin")
            notes = notify_store(store)

            sender = Sender(store, Settings(database_url="sqlite://", public_url=PUBLIC, notify_timeout_s=5))
            sim.rewind(str(REPO), "v10")  # v11 and v12 leave the main line
            poll(sim, store)
            assert sender.flush().sent == 2  # the rewind: "all", and "restored pin" told to move away
            sim.advance(str(REPO))  # v11 pushed back: stored already, nothing new
            assert isinstance(poll(sim, store), Unchanged)
            poll(sim, store)  # nothing moved: nothing queued again
            head = store.head(REPO)
            assert head is not None and head.sha == line[10] and store.revisions.off_main_branch(REPO) == {line[11]}
            report = sender.flush()
            assert report.sent == 2, report  # the restore: "all" and "restored pin"
            assert receivers["high"].received == [] and receivers["kept pins"].received == []

            told = [m for body in receivers["all"].received for m in body["data"]["revisions"]]
            assert [("rewrite" in m, "restore" in m) for m in told] == [(True, False), (False, True)]
            restore = told[1]
            assert restore["sha"] == line[10]
            assert restore["restore"] == {"old_head": line[9], "new_head": line[10], "restored": [line[10]]}
            assert "history restored upstream: 1 stored revision back on the main line" in restore["title"]
            assert "pins" not in restore

            pinned = [m for body in receivers["restored pin"].received for m in body["data"]["revisions"]]
            assert [m["pins"] for m in pinned] == [
                [{"dropped": True, "where": "app.py:2", "revision": line[10], "move_to": line[9]}],
                [{"restored": True, "where": "app.py:2", "revision": line[10]}],
            ]
            text = render([pinned[1]], PUBLIC, "k").markdown
            assert text.count("history restored upstream") == 1 and "…and" not in text
            assert (f"your pin at `app.py:2` is on [{line[10][:12]}]({PUBLIC}/models/{REPO}/revisions/{line[10]}), "
                    "back on the main line upstream") in text
            assert notes.counts().pending == 0
    finally:
        for receiver in receivers.values():
            receiver.stop()
