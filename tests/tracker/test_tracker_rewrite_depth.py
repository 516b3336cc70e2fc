"""A force-push costs the hub requests of what it changed, not of the repo's whole history.

The listing stops at the first stored commit, as on any poll; below it lies that commit's stored
ancestry, so the poll no longer lists every commit again to find what upstream dropped. A push that
shares nothing with the stored history is listed to its root once, not twice. What is stored is the
same as when every commit was listed: the tests compare it with a store that polled the whole
listing (a fresh backfill of the new history) and with the rewrite the old path recorded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tracker_polling import poll_once

from hubwatch.advisories.pin_standing import standing_at
from hubwatch.domain.records import RepoId
from hubwatch.storage import Store
from hubwatch.tracker.poller import NewRevisions, Unchanged

DEEP = RepoId.parse("acme/deep")
PAGE = 2  # commits per listing page: a whole listing of n commits is n / 2 requests


def deep_root(root: Path, versions: list[str], repo: RepoId = DEEP) -> Path:
    """`repo` (default `acme/deep`) with one commit per entry of `versions`: equal entries at one position make equal
    commits (the emulator derives a sha from the repo, the version and its files)."""
    folder = root / f"{repo.org}__{repo.name}"
    for number, content in enumerate(versions, start=1):
        (folder / f"v{number}").mkdir(parents=True)
        config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
                  "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                  "num_key_value_heads": 4, "vocab_size": 1000, "max_position_embeddings": 512,
                  "torch_dtype": "bfloat16", "transformers_version": content}
        (folder / f"v{number}" / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return root


def polled(sim: Any, store: Store, repo: RepoId = DEEP) -> tuple[Any, int]:
    """One poll of `repo` and the hub requests it made."""
    before = sim.requests()["seen"]
    outcome = poll_once(sim, store, repo)
    return outcome, sim.requests()["seen"] - before


def shas(store: Store, repo: RepoId = DEEP) -> list[str]:
    return [e.revision.sha for e in store.history(repo)]


def test_a_force_push_of_the_top_commit_asks_the_same_requests_at_any_depth(
    hubsim_factory: Any, store: Store, tmp_path: Path
) -> None:
    asked = {depth: _top_commit_replaced(hubsim_factory, store, tmp_path / str(depth), depth) for depth in (8, 40)}
    # The head, two pages of the listing (the new commit, then the stored one it stopped at) and the
    # new revision's files, whatever the depth (listing it all again was depth / 2 more requests).
    assert asked[8] == asked[40], asked


def _top_commit_replaced(hubsim_factory: Any, store: Store, root: Path, depth: int) -> int:
    """Backfill a `depth`-commit repo, replace its newest commit upstream, poll: the requests of that poll."""
    repo = RepoId.parse(f"acme/deep{depth}")
    versions = [f"4.{i}.0" for i in range(depth)]
    first = hubsim_factory(root=deep_root(root / "a", versions, repo), at=None, page_size=PAGE)
    assert isinstance(poll_once(first, store, repo), NewRevisions)
    old = shas(store, repo)
    assert len(old) == depth
    first.stop()

    # Upstream replaces the newest commit by another one on the same parent.
    pushed = hubsim_factory(root=deep_root(root / "b", versions[:-1] + ["replaced"], repo), at=None, page_size=PAGE)
    outcome, requests = polled(pushed, store, repo)
    new_head = pushed.head(str(repo))
    assert isinstance(outcome, NewRevisions) and outcome.shas == (new_head,)
    (rewrite,) = store.revisions.rewrites(repo)
    assert (rewrite.old_head, rewrite.new_head, rewrite.dropped) == (old[-1], new_head, (old[-1],))
    entry = store.revision(repo, new_head)
    assert entry is not None and entry.revision.parent == old[-2]
    assert store.revisions.off_main_branch(repo) == {old[-1]}
    assert store.revisions.revision_shas(repo) == [*old[:-1], new_head]
    pushed.stop()
    return requests


def test_a_push_back_and_a_push_forward_again_list_no_more_than_they_change(
    hubsim_factory: Any, store: Store, tmp_path: Path
) -> None:
    versions = [f"4.{i}.0" for i in range(30)]
    first = hubsim_factory(root=deep_root(tmp_path / "a", versions), at=None, page_size=PAGE)
    poll_once(first, store, DEEP)
    old = shas(store)
    first.stop()

    # Back to the 27th commit: three dropped, nothing new; one listing page (it stops at once).
    back = hubsim_factory(root=deep_root(tmp_path / "b", versions[:27]), at=None, page_size=PAGE)
    outcome, requests = polled(back, store)
    assert isinstance(outcome, Unchanged) and outcome.head == old[26] and outcome.rewritten == tuple(old[27:])
    assert store.head(DEEP).sha == old[26] and store.revisions.off_main_branch(DEEP) == set(old[27:])
    assert requests == 2  # the head and the listing's first page
    back.stop()

    # The three pushed back: the head follows, nothing is stored twice or counted dropped.
    again = hubsim_factory(root=deep_root(tmp_path / "c", versions), at=None, page_size=PAGE)
    outcome, requests = polled(again, store)
    assert isinstance(outcome, Unchanged) and outcome.head == old[-1] and outcome.rewritten == ()
    assert store.head(DEEP).sha == old[-1] and store.revisions.off_main_branch(DEEP) == set()
    assert shas(store) == old and len(store.revisions.rewrites(DEEP)) == 1
    assert requests == 2


def test_a_push_that_shares_no_commit_is_listed_once(hubsim_factory: Any, store: Store, tmp_path: Path) -> None:
    depth = 20
    first = hubsim_factory(root=deep_root(tmp_path / "a", [f"4.{i}.0" for i in range(depth)]), at=None,
                           page_size=PAGE)
    poll_once(first, store, DEEP)
    old = shas(store)
    first.stop()

    rewritten = [f"5.{i}.0" for i in range(depth)]
    pushed = hubsim_factory(root=deep_root(tmp_path / "b", rewritten), at=None, page_size=PAGE)
    outcome, requests = polled(pushed, store)
    assert isinstance(outcome, NewRevisions) and len(outcome.shas) == depth
    (rewrite,) = store.revisions.rewrites(DEEP)
    assert rewrite.dropped == tuple(old) and store.revisions.off_main_branch(DEEP) == set(old)

    # A fresh store backfilling the same history asks the same requests: the listing once.
    fresh = Store.open(f"sqlite:///{tmp_path / 'fresh.db'}")
    try:
        backfill, fresh_requests = polled(pushed, fresh)
        assert isinstance(backfill, NewRevisions) and backfill.shas == outcome.shas
        assert requests == fresh_requests
        assert [e.revision.parent for e in fresh.history(DEEP)] == [
            store.revision(DEEP, sha).revision.parent for sha in outcome.shas]
        # The main line is the new history alone: the old one is not its ancestry.
        assert fresh.revisions.revision_shas(DEEP) == store.revisions.revision_shas(DEEP) == list(outcome.shas)
    finally:
        fresh.close()


def test_a_squashed_history_is_one_root_and_old_pins_are_off_the_main_line(
    hubsim_factory: Any, store: Store, tmp_path: Path
) -> None:
    """`HfApi.super_squash_history` leaves one commit without a parent: the stored revisions before it
    are no ancestors of it, so a pin on them is answered as dropped, not as on the line."""
    versions = [f"4.{i}.0" for i in range(12)]
    first = hubsim_factory(root=deep_root(tmp_path / "a", versions), at=None, page_size=PAGE)
    poll_once(first, store, DEEP)
    old = shas(store)
    first.stop()

    squashed = hubsim_factory(root=deep_root(tmp_path / "b", ["squashed"]), at=None, page_size=PAGE)
    outcome, requests = polled(squashed, store)
    (root,) = outcome.shas
    assert store.revision(DEEP, root).revision.parent is None
    assert store.revisions.revision_shas(DEEP) == [root] and store.head(DEEP).sha == root
    assert store.revisions.off_main_branch(DEEP) == set(old)
    for pin in (old[0], old[5], old[-1]):
        assert standing_at(store, DEEP, pin, main_line_only=True).known is False, pin
        assert store.revisions.revision_shas(DEEP, pin) == old[:old.index(pin) + 1]  # its own line is still read
    now = standing_at(store, DEEP, root, main_line_only=True)
    assert now.known and now.lacks == () and now.suggested is None


def pickled_root(root: Path, versions: list[tuple[str, bool]]) -> Path:
    """`acme/deep` as `deep_root` makes it, each commit with a pickled `pytorch_model.bin` when asked."""
    deep_root(root, [content for content, _ in versions])
    for number, (_, pickled) in enumerate(versions, start=1):
        if pickled:
            (root / "acme__deep" / f"v{number}" / "pytorch_model.bin").write_bytes(b"\x80\x02c__builtin__\neval\n")
    return root


def test_a_squash_keeps_the_hazards_its_content_still_carries(hubsim_factory: Any, store: Store, tmp_path: Path) -> None:
    """The squashed commit descends from nothing stored, so no range of the old line reaches it: the
    hazards open at the old head that the squash does not remove hold at it by a range event of its own."""
    first = hubsim_factory(root=pickled_root(tmp_path / "a", [("4.0", False), ("4.1", True), ("4.2", True)]), at=None)
    poll_once(first, store, DEEP)
    old = shas(store)
    (hazard,) = [a for a in store.advisories.records(DEEP) if a.revision_sha == old[1]]
    assert {a.id for a in store.advisories.affecting(DEEP, old[2])} == {hazard.id}
    first.stop()

    squashed = hubsim_factory(root=pickled_root(tmp_path / "b", [("4.2", True)]), at=None)
    outcome, _ = polled(squashed, store)
    (root,) = outcome.shas
    assert {a.id for a in store.advisories.affecting(DEEP, root)} == {hazard.id}
    now = standing_at(store, DEEP, root, main_line_only=True)
    assert [a.id for a in now.carries] == [hazard.id]
    events = store.advisories.get(hazard.id).osv["affected"][0]["ranges"][0]["events"]
    assert {"introduced": old[1]} in events and {"introduced": root} in events
    # The old pins keep their answer, along their own line.
    assert {a.id for a in store.advisories.affecting(DEEP, old[0])} == set()
    assert {a.id for a in store.advisories.affecting(DEEP, old[2])} == {hazard.id}
    squashed.stop()

    # A commit on top that removes the pickle fixes it on the new line.
    fixed = hubsim_factory(root=pickled_root(tmp_path / "c", [("4.2", True), ("4.3", False)]), at=None)
    # (v1 is the squashed root again: the same repo, version and files make the same sha)
    outcome, _ = polled(fixed, store)
    (clean,) = outcome.shas
    assert store.advisories.affecting(DEEP, clean) == []
    assert {a.id for a in store.advisories.affecting(DEEP, root)} == {hazard.id}
    assert {a.id for a in store.advisories.affecting(DEEP, old[2])} == {hazard.id}  # the old line has no fix


def test_a_squash_that_drops_a_hazard_is_clean_and_one_that_adds_one_is_advised(
    hubsim_factory: Any, store: Store, tmp_path: Path
) -> None:
    first = hubsim_factory(root=pickled_root(tmp_path / "a", [("4.0", False), ("4.1", True)]), at=None)
    poll_once(first, store, DEEP)
    old = shas(store)
    (hazard,) = store.advisories.records(DEEP)
    first.stop()

    squashed = hubsim_factory(root=pickled_root(tmp_path / "b", [("4.1", False)]), at=None)
    outcome, _ = polled(squashed, store)
    (root,) = outcome.shas
    assert store.advisories.affecting(DEEP, root) == []
    assert {a.id for a in store.advisories.affecting(DEEP, old[1])} == {hazard.id}
    squashed.stop()

    # Squashed again, now with a pickle the head it replaces did not have: a hazard raised at it.
    again = hubsim_factory(root=pickled_root(tmp_path / "c", [("4.9", True)]), at=None)
    outcome, _ = polled(again, store)
    (pickled,) = outcome.shas
    (raised,) = store.advisories.affecting(DEEP, pickled)
    assert raised.revision_sha == pickled and raised.id != hazard.id
    assert "pickle" in raised.osv["summary"].lower() or "pickle" in json.dumps(raised.osv).lower()


def test_a_pin_the_squash_dropped_is_told_to_move_back_onto_the_main_line(
    hubsim_factory: Any, store: Store, tmp_path: Path
) -> None:
    """`hubwatch check` (the local store and `--server` alike) and the standing API: a pin on the old
    history keeps its advisories along its own line, is said to be off the main line, and is told the
    main line's revision to move to (the head here: nothing cleaner), even when nothing affects it."""
    from fastapi.testclient import TestClient

    from hubwatch.feeds import create_app
    from hubwatch.pincheck.pincheck import ServerSource, StoreSource, check_pins
    from hubwatch.pincheck.pins import scan_path
    from hubwatch.pincheck.report import OFF_THE_MAIN_LINE
    from hubwatch.settings import Settings

    first = hubsim_factory(root=pickled_root(tmp_path / "a", [("4.0", False), ("4.1", True), ("4.2", True)]), at=None)
    poll_once(first, store, DEEP)
    old = shas(store)
    (hazard,) = store.advisories.records(DEEP)
    first.stop()
    squashed = hubsim_factory(root=pickled_root(tmp_path / "b", [("4.3", False)]), at=None)  # the pickle gone
    (root,) = polled(squashed, store)[0].shas

    code = tmp_path / "app.py"
    code.write_text("".join(f'hf_hub_download("{DEEP}", "config.json", revision="{sha}")\n' for sha in (*old, root)))
    pins = scan_path(code).pins
    local = check_pins(pins, StoreSource(store))
    with TestClient(create_app(Settings(), store)) as client:
        remote = check_pins(pins, ServerSource(client))
        api = [client.get(f"/api/v1/models/{DEEP}/revisions/{sha}/standing").json() for sha in (*old, root)]
        pages = [client.get(f"/models/{DEEP}/revisions/{sha}").text for sha in (*old, root)]
        compared = client.get(f"/models/{DEEP}/compare/{old[0]}...{root}")
        badges = [client.get(f"/badges/{DEEP}/revisions/{sha}.json").json() for sha in (*old, root)]
        revisions = [client.get(f"/api/v1/models/{DEEP}/revisions/{sha}").json() for sha in (*old, root)]
        along = client.get(f"/api/v1/models/{DEEP}/compare/{old[0]}...{root}").json()
    assert [r["on_main_line"] for r in revisions] == [False, False, False, True]
    assert compared.status_code == 200, compared.text
    assert [(b["message"], b["color"]) for b in badges] == [
        ("off the main line", "orange"), ("1 hazard ≥ low · off the main line", "red"), ("1 hazard ≥ low · off the main line", "red"),
        ("up to date", "brightgreen")]
    assert "BASE is not on the repo's main line any more (history rewritten upstream)" in compared.text
    assert "forward in the stored history" not in compared.text
    assert (along["revisions_between"], along["on_main_line"]) == (None, {"base": False, "head": True})
    assert all(f'href="/models/{DEEP}/compare/{sha}...{root}">compare with the revision to move to</a>' in page
               for sha, page in zip(old, pages))
    # The revision pages say what `check` says: a dropped commit is a warning even when clean, with the move.
    move = f'move to <a href="/models/{DEEP}/revisions/{root}">'
    assert 'class="pin pin-warn">A pin here is up to date' in pages[0] and move in pages[0]
    assert "not on the main line any more (history rewritten upstream)" in pages[0]
    assert all('class="pin pin-bad">A pin here carries 1 hazard' in page and move in page for page in pages[1:3])
    assert 'class="pin pin-ok">A pin here is up to date' in pages[3] and "move to" not in pages[3]
    assert [(r.status, r.commit, r.hits, r.suggestion, r.note, r.on_main_line, r.moves) for r in remote] == [
        (r.status, r.commit, r.hits, r.suggestion, r.note, r.on_main_line, r.moves) for r in local]
    assert [r.moves for r in local] == [True, True, True, False]  # `check --fix` moves every dropped pin
    clean_old, *held_old, now = local
    for report in (clean_old, *held_old):
        assert report.note == OFF_THE_MAIN_LINE and report.suggestion is not None
        assert report.suggestion.commit == root and report.suggestion.changes == ()
    assert clean_old.status == "clean" and clean_old.suggestion.resolves == ()
    for report in held_old:  # the pickle, along the old line; gone at the squashed commit
        assert report.status == "affected" and [h.id for h in report.hits] == [hazard.id]
        assert report.suggestion.resolves == (hazard.id,)
    assert now.status == "clean" and now.note == "" and now.suggestion is None
    assert [a["on_main_line"] for a in api] == [False, False, False, True]
    assert [a["suggested"] for a in api] == [root, root, root, None]


def test_check_fix_moves_every_pin_the_squash_dropped_clean_ones_too(
    hubsim_factory: Any, store: Store, database_url: str, tmp_path: Path
) -> None:
    """The hub may stop serving a commit a squash dropped, so `check --fix` moves a pin on it even when
    nothing affects it; a pin at the head stays. The second check passes and has nothing to move."""
    from click.testing import CliRunner

    from hubwatch.cli import _register, cli

    first = hubsim_factory(root=pickled_root(tmp_path / "a", [("4.0", False), ("4.1", True)]), at=None)
    poll_once(first, store, DEEP)
    clean, pickled = shas(store)
    first.stop()
    squashed = hubsim_factory(root=pickled_root(tmp_path / "b", [("4.3", False)]), at=None)
    (root,) = polled(squashed, store)[0].shas
    squashed.stop()
    project = tmp_path / "project"
    project.mkdir()
    code = project / "app.py"
    code.write_text(f'CLEAN = "{clean}"\nPICKLED = "{pickled}"\nHEAD = "{root}"\n'
                    + "".join(f'hf_hub_download("{DEEP}", "config.json", revision={name})\n'
                              for name in ("CLEAN", "PICKLED", "HEAD")))
    _register()

    def check(*args: str) -> Any:
        return CliRunner().invoke(cli, ["check", str(project), *args],
                                  env={"HUBWATCH_DATABASE_URL": database_url, "COLUMNS": "200"})

    before = json.loads(check("--json").output)
    assert [(p["status"], p["on_main_line"]) for p in before["pins"]] == [
        ("clean", False), ("affected", False), ("clean", True)]
    assert check().exit_code == 1  # the pickle on the dropped line (high)
    assert check("--fail-on", "critical").exit_code == 0
    assert check("--fail-on", "critical", "--strict").exit_code == 1  # a pin on a dropped commit, clean or not
    dry = json.loads(check("--fix", "--dry-run", "--json").output)
    assert [(f["old"], f["new"], f["written"]) for f in dry["fixed"]] == [(clean, root, False), (pickled, root, False)]
    result = check("--fix")
    assert result.exit_code == 0, result.output
    assert result.output.count("changed ") == 2 and "left alone" not in result.output
    assert code.read_text() == f'CLEAN = "{root}"\nPICKLED = "{root}"\nHEAD = "{root}"\n' + "".join(
        f'hf_hub_download("{DEEP}", "config.json", revision={name})\n' for name in ("CLEAN", "PICKLED", "HEAD"))
    after = json.loads(check("--json").output)
    assert [(p["status"], p["on_main_line"], p["suggested"]) for p in after["pins"]] == [("clean", True, None)] * 3
    assert "nothing to fix" in check("--fix").output
    assert check("--strict").exit_code == 0


def test_compare_counts_along_the_main_line_after_a_force_push(
    hubsim_factory: Any, store: Store, tmp_path: Path
) -> None:
    """Stored positions count the commit a force-push dropped too; the compare page counts the main
    line, and says that a dropped side is on no line with the other instead of counting."""
    from fastapi.testclient import TestClient

    from hubwatch.feeds import create_app
    from hubwatch.settings import Settings

    first = hubsim_factory(root=deep_root(tmp_path / "a", ["a", "b", "c"]), at=None)
    poll_once(first, store, DEEP)
    one, two, dropped = shas(store)
    first.stop()
    pushed = hubsim_factory(root=deep_root(tmp_path / "b", ["a", "b", "z"]), at=None)
    (new,) = polled(pushed, store)[0].shas
    pushed.stop()
    with TestClient(create_app(Settings(), store)) as client:
        def between(base: str, head: str) -> tuple[Any, Any]:
            body = client.get(f"/api/v1/models/{DEEP}/compare/{base}...{head}").json()
            return body["revisions_between"], body["on_main_line"]

        assert between(two, new) == (1, {"base": True, "head": True})  # positions 2 → 4 would say 2
        assert between(new, one) == (-2, {"base": True, "head": True})
        assert between(one, two) == (1, {"base": True, "head": True})
        assert between(dropped, new) == (None, {"base": False, "head": True})
        page = client.get(f"/models/{DEEP}/compare/{two}...{new}").text
        assert "1 revision forward in the stored history" in page


def test_the_daemon_follows_a_live_squash_and_rewind_in_one_emulator(
    hubsim_factory: Any, store: Store, tmp_path: Path
) -> None:
    """The emulator's own force-pushes (`/_sim/…/rewind`, `/_sim/…/squash`), as a running daemon sees them."""
    sim = hubsim_factory(root=pickled_root(tmp_path, [("4.0", False), ("4.1", True), ("4.2", True), ("4.3", True)]),
                         at="v3")
    poll_once(sim, store, DEEP)
    old = shas(store)
    assert len(old) == 3
    back = sim.rewind(str(DEEP), "v2")
    outcome = poll_once(sim, store, DEEP)
    assert isinstance(outcome, Unchanged) and outcome.head == back == old[1] and outcome.rewritten == (old[2],)
    squashed = sim.squash(str(DEEP))
    outcome = poll_once(sim, store, DEEP)
    assert isinstance(outcome, NewRevisions) and outcome.shas == (squashed,)
    assert store.revisions.revision_shas(DEEP) == [squashed] and store.revisions.off_main_branch(DEEP) == set(old)
    (hazard,) = store.advisories.records(DEEP)
    assert [a.id for a in standing_at(store, DEEP, squashed).carries] == [hazard.id]  # the pickle is still there
    assert standing_at(store, DEEP, old[1]).suggested == squashed
    following = sim.advance(str(DEEP))  # v4 lands on top of the squashed commit
    assert poll_once(sim, store, DEEP).shas == (following,)
    assert store.revisions.revision_shas(DEEP) == [squashed, following]


def test_re_deriving_a_squashed_history_gives_what_the_polls_stored(
    hubsim_factory: Any, store: Store, tmp_path: Path
) -> None:
    """A new advisory model re-derives every repo from its stored history (`rederive_repo`): the
    squashed commit is compared with the old head again and carries the same hazard, so nothing
    the polls stored is replaced."""
    from hubwatch.settings import Settings
    from hubwatch.tracker.rederive import rederive_repo

    sim = hubsim_factory(root=pickled_root(tmp_path, [("4.0", False), ("4.1", True), ("4.2", False)]), at="v2")
    poll_once(sim, store, DEEP)
    sim.squash(str(DEEP))
    poll_once(sim, store, DEEP)
    sim.advance(str(DEEP))  # the pickle removed on top of the squash
    poll_once(sim, store, DEEP)
    before = {a.id: a.osv for a in store.advisories.records(DEEP)}
    changes = {e.revision.sha: [c.summary for c in e.changes] for e in store.history(DEEP)}
    result = rederive_repo(store, DEEP, Settings(database_url="sqlite://"))
    assert result.revisions == 0 and result.records == []
    assert {a.id: a.osv for a in store.advisories.records(DEEP)} == before
    assert {e.revision.sha: [c.summary for c in e.changes] for e in store.history(DEEP)} == changes
