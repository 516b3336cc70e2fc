"""A base's chat-template fix and its three derivatives, through the emulator's listing and a real store.

famlab/base v2 ends assistant turns with the eos token; chat-stale still carries v1's template
(until its own v2), chat-fixed already has the fix, chat-own has a template of its own
(tests/data/derivatives/README.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
from hubwatch.advisories.inherit import is_inherited
from hubwatch.advisories.osv import schema
from hubwatch.domain.records import RepoId
from hubwatch.settings import Settings
from hubwatch.tracker.derivatives import check_inheritance, derivatives, watch_with_derivatives
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import poll_repos

BASE = RepoId.parse("famlab/base")
STALE = RepoId.parse("famlab/chat-stale")
FIXED = RepoId.parse("famlab/chat-fixed")
OWN = RepoId.parse("famlab/chat-own")


def _setup(hubsim_factory: Any, store: Any, data_dir: Path) -> tuple[Any, HubClient, Settings]:
    sim = hubsim_factory(root=data_dir / "derivatives", at="v1")
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url)
    return sim, HubClient.from_settings(settings), settings


def _poll_all(store: Any, hub: HubClient, settings: Settings) -> None:
    poll_repos([s.repo for s in store.repos.watched()], hub=hub, store=store, settings=settings)


def _base_fixed_and_checked(hubsim_factory: Any, store: Any, data_dir: Path) -> tuple[Any, HubClient, Settings]:
    """The base and its derivatives watched and polled at v1, the base's fix (v2) polled and inheritance checked."""
    sim, hub, settings = _setup(hubsim_factory, store, data_dir)
    watch_with_derivatives(store, hub, BASE)
    _poll_all(store, hub, settings)
    sim.advance(str(BASE))
    _poll_all(store, hub, settings)
    check_inheritance(store, settings)
    return sim, hub, settings


def _inherited(store: Any, repo: RepoId) -> list[Any]:
    return [r for r in store.advisories.records(repo) if is_inherited(r.osv)]


def test_discovered_through_the_listing_with_relations(hubsim_factory: Any, store: Any, data_dir: Path) -> None:
    _, hub, _ = _setup(hubsim_factory, store, data_dir)
    found = dict(watch_with_derivatives(store, hub, BASE))
    assert found == {STALE: "finetune", FIXED: "finetune", OWN: "adapter"}  # chat-fixed's relation inferred
    assert {s.repo for s in store.repos.watched()} == {BASE, STALE, FIXED, OWN}
    members = {m.repo: (m.base, m.relation) for m in derivatives(store).members()}
    assert members == {STALE: (BASE, "finetune"), FIXED: (BASE, "finetune"), OWN: (BASE, "adapter")}
    # Only the relation asked for.
    assert dict(hub.derivatives(BASE, ["adapter"])) == {OWN: "adapter"}
    assert len(hub.derivatives(BASE, ["finetune", "adapter"], limit=2)) == 2


def test_the_stale_one_inherits_the_fix_the_others_do_not(hubsim_factory: Any, store: Any, data_dir: Path,
                                                          decoded: list[str]) -> None:
    sim, hub, settings = _setup(hubsim_factory, store, data_dir)
    watch_with_derivatives(store, hub, BASE)
    _poll_all(store, hub, settings)
    assert check_inheritance(store, settings) == []  # the base advised nothing yet

    fix_sha = sim.advance(str(BASE))
    _poll_all(store, hub, settings)
    (base_fix,) = [a for a in store.advisories.records(BASE) if "chat_template" in a.osv["database_specific"]["kinds"]]
    assert base_fix.revision_sha == fix_sha
    checks = {c.repo: c.result for c in check_inheritance(store, settings)}
    assert checks[STALE].status == "stale" and checks[FIXED].status == "matches" and checks[OWN].status == "own"

    (inherited,) = _inherited(store, STALE)
    osv = inherited.osv
    jsonschema.validate(osv, schema())
    assert osv["upstream"] == [base_fix.id] and base_fix.id in osv["related"]
    assert osv["summary"] == f"{STALE} still carries the chat template that {BASE} fixed at {fix_sha[:12]}"
    (entry,) = osv["database_specific"]["changes"]
    rendered = entry["detail"]["rendered_diff"]
    assert rendered and any("</s>" in r["diff"] for r in rendered.values())  # the base's eos, rendered in the sandbox
    stale_head = store.head(STALE).sha
    assert osv["affected"][0]["ranges"][0]["events"] == [{"introduced": stale_head}]
    assert [a.id for a in store.advisories.affecting(STALE, stale_head)] == [inherited.id]

    assert _inherited(store, FIXED) == [] and store.advisories.records(FIXED) == []
    assert _inherited(store, OWN) == []
    own_note = derivatives(store).member(OWN).notes[base_fix.id]  # type: ignore[union-attr]
    assert own_note["status"] == "own" and "of its own" in own_note["note"]
    decoded.clear()
    assert check_inheritance(store, settings) == []  # nothing moved: nothing checked again…
    assert decoded == []  # …and known without decoding a record of the base (its history version)


def test_the_inherited_advisory_closes_when_the_derivative_updates(hubsim_factory: Any, store: Any, data_dir: Path) -> None:
    sim, hub, settings = _base_fixed_and_checked(hubsim_factory, store, data_dir)
    (opened,) = _inherited(store, STALE)
    old_head = store.head(STALE).sha

    new_head = sim.advance(str(STALE))
    _poll_all(store, hub, settings)
    (checked,) = check_inheritance(store, settings)
    assert checked.repo == STALE and checked.result.status == "matches"
    (closed,) = _inherited(store, STALE)
    assert closed.id == opened.id and closed.modified > opened.modified
    events = closed.osv["affected"][0]["ranges"][0]["events"]
    assert events == [{"introduced": old_head}, {"fixed": new_head}]
    jsonschema.validate(closed.osv, schema())
    # The old head is affected by the inherited record and by chat-stale's own update advisory.
    assert closed.id in {a.id for a in store.advisories.affecting(STALE, old_head)}
    assert store.advisories.affecting(STALE, new_head) == []


def test_withdrawing_the_base_record_withdraws_the_inherited_one(hubsim_factory: Any, store: Any, data_dir: Path) -> None:
    from datetime import timedelta

    from hubwatch.domain.records import AdvisoryRecord
    from hubwatch.domain.times import rfc3339

    sim, hub, settings = _base_fixed_and_checked(hubsim_factory, store, data_dir)
    (base_fix,) = store.advisories.records(BASE)
    later = base_fix.modified + timedelta(days=1)
    withdrawn = AdvisoryRecord(base_fix.id, base_fix.repo, base_fix.revision_sha,
                               {**base_fix.osv, "modified": rfc3339(later)}, later, withdrawn=later)
    store.revisions.replace_derived(BASE, {}, [withdrawn])  # as an operator's withdrawal is stored
    check_inheritance(store, settings)
    (inherited,) = _inherited(store, STALE)
    assert inherited.withdrawn is not None and store.advisories.affecting(STALE, store.head(STALE).sha) == []


def test_a_raised_record_is_checked_again_without_walking_back_the_history(
    hubsim_factory: Any, store: Any, data_dir: Path, monkeypatch: Any, decoded: list[str]
) -> None:
    """The derivative goes on committing (checkpoints that still carry the stale template, each with
    an advisory of its own): each check of its new head, the inherited record raised already, loads
    as few snapshots and decodes as few records after 40 new revisions as after 5. The run back from
    the head is walked only when a record is raised; the derivative's own records are not read."""
    import hashlib
    from datetime import timedelta

    import hubwatch.tracker.derivatives as tracked
    from hubwatch.domain.records import AdvisoryRecord, RevisionRecord

    sim, hub, settings = _base_fixed_and_checked(hubsim_factory, store, data_dir)
    (raised,) = _inherited(store, STALE)
    loads: list[tuple[RepoId, str | None]] = []
    original = tracked.load_baseline

    def counting(st: Any, repo: RepoId, sha: str | None) -> Any:
        loads.append((repo, sha))
        return original(st, repo, sha)

    monkeypatch.setattr(tracked, "load_baseline", counting)
    figures = []
    for more in (5, 40):
        head = store.head(STALE)
        files, contents = store.revisions.snapshot_files(STALE, head.sha)
        parent = head.sha
        for i in range(more):
            sha = hashlib.sha1(f"checkpoint {more}-{i}".encode()).hexdigest()
            own = f"x_OWN-{sha[:12]}"
            osv = {"id": own, "modified": "2024-01-01T12:00:00Z", "published": "2024-01-01T12:00:00Z",
                   "affected": [{"package": {"ecosystem": "GIT", "name": STALE.url()}, "ranges": [
                       {"type": "GIT", "repo": STALE.url(), "events": [{"introduced": "0"}, {"fixed": sha}]}]}],
                   "database_specific": {"direction": "update", "changes": [], "max_severity": "low"}}
            store.save_revision(STALE, RevisionRecord(sha, parent, head.date + timedelta(hours=i + 1), f"checkpoint {i}"),
                                files, contents, [], None, [AdvisoryRecord(own, STALE, sha, osv, head.date)])
            parent = sha
        assert store.head(STALE).sha == parent
        loads.clear()
        decoded.clear()
        checks = [c for c in check_inheritance(store, settings) if c.repo == STALE]
        assert [c.result.status for c in checks] == ["stale"]
        figures.append((sum(1 for repo, _ in loads if repo == STALE), len(decoded)))
    assert figures[0] == figures[1] and figures[0][0] <= 1, figures
    (still,) = _inherited(store, STALE)
    assert still.id == raised.id and still.osv == raised.osv  # the record raised first, unchanged
