"""Renames upstream (the emulator's 307 mode) and case-insensitive ids, through the official client:
one repo with its history, a feed entry for the rename, stable entry and advisory ids, old URLs
answering 308, and the listing's new id still moving the watch."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import feedparser
import httpx
from fastapi.testclient import TestClient

from hubwatch.domain.records import RepoId
from hubwatch.feeds import create_app
from hubwatch.settings import Settings
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import NewRevisions, Unchanged, poll_repos
from hubwatch.tracker.scheduler import PollCycle

QWEN = RepoId.parse("Qwen/Qwen-7B")
MOVED = RepoId.parse("qwen-archive/Qwen-7B-base")


def _settings(sim: Any) -> Settings:
    return Settings(database_url="sqlite://", hub_endpoint=sim.url, public_url="https://hw.example", poll_interval_s=60)


def _poll(sim: Any, store: Any, repo: RepoId) -> Any:
    settings = _settings(sim)
    (outcome,) = poll_repos([repo], hub=HubClient.from_settings(settings), store=store, settings=settings)
    return outcome


def _rename(sim: Any, old: RepoId, new: RepoId) -> None:
    answer = httpx.post(f"{sim.url}/_sim/{old}/rename", json={"to": str(new)})
    assert answer.status_code == 200, answer.text


def _feed_ids(client: TestClient, path: str) -> list[str]:
    return [e.id for e in feedparser.parse(client.get(path).content).entries]


def test_a_rename_keeps_one_repo_with_its_history_and_says_so(hubsim_factory: Any, store: Any) -> None:
    sim = hubsim_factory(at="v1")
    store.watch(QWEN)
    first = _poll(sim, store, QWEN)
    assert isinstance(first, (NewRevisions, Unchanged))
    sim.advance(str(QWEN))
    sim.advance(str(QWEN))
    assert isinstance(_poll(sim, store, QWEN), NewRevisions)
    history = [e.revision.sha for e in store.history(QWEN)]
    advisories = sorted(a.id for a in store.advisories.records(QWEN))
    assert advisories and len(history) == 3
    app = create_app(_settings(sim), store)
    with TestClient(app) as client:
        before = _feed_ids(client, f"/models/{QWEN}/feed.atom")
        published_before = {i: client.get(f"/v1/vulns/{i}").json()["modified"] for i in advisories}
        assert all(client.get(f"/v1/vulns/{i}").json()["affected"][0]["package"]["name"] == QWEN.url()
                   for i in advisories)

    _rename(sim, QWEN, MOVED)
    outcome = _poll(sim, store, QWEN)  # the watch still names the old id: the hub answers the new one
    assert isinstance(outcome, Unchanged) and outcome.repo == MOVED and outcome.renamed_from == QWEN
    [state] = store.repos.watched()
    assert str(state.repo) == str(MOVED)
    assert [e.revision.sha for e in store.history(MOVED)] == history
    assert [e.revision.sha for e in store.history(QWEN)] == history  # the old id is an alias of the one repo
    assert sorted(a.id for a in store.advisories.records(MOVED)) == advisories
    [rename] = store.repos.renames(MOVED)
    assert (str(rename.old), str(rename.new)) == (str(QWEN), str(MOVED))
    # A second poll (and a repeated rename) records nothing more.
    assert _poll(sim, store, MOVED).renamed_from is None
    assert store.repos.rename_repo(QWEN, MOVED, datetime.now(timezone.utc)) is False
    assert len(store.repos.renames(QWEN)) == 1

    with TestClient(app, follow_redirects=False) as client:
        after = _feed_ids(client, f"/models/{MOVED}/feed.atom")
        page = client.get(f"/models/{MOVED}").text
        top = feedparser.parse(client.get("/feed.atom").content).entries[0]
        moved = {path: client.get(path) for path in (
            f"/models/{QWEN}", f"/models/{QWEN}.md", f"/models/{QWEN}/feed.atom?kind=files",
            f"/badges/{QWEN}.json", f"/api/v1/models/{QWEN}/history", f"/models/QWEN/qwen-7b/revisions/{history[-1]}",
            f"/models/QWEN-ARCHIVE/qwen-7b-BASE",
        )}
        osv_old = client.post("/v1/query", json={"package": {"ecosystem": "GIT", "name": QWEN.url()}}).json()
        osv_case = client.post(
            "/v1/query", json={"package": {"ecosystem": "GIT", "name": "https://huggingface.co/qwen/QWEN-7b"}}
        ).json()
        osv_new = client.post("/v1/query", json={"package": {"ecosystem": "GIT", "name": MOVED.url()}}).json()
    # Old entries keep their ids (derived from the repo's first id); the rename is one new entry.
    assert [i for i in after if "/renamed/" not in i] == before
    assert "renamed upstream from Qwen/Qwen-7B to qwen-archive/Qwen-7B-base" in top.title
    assert top.id.endswith(f"{QWEN}/renamed/{QWEN.key}")
    assert "Renamed upstream" in page
    for path, response in moved.items():
        assert response.status_code == 308, path
        location = response.headers["location"]
        assert location.startswith(f"/models/{MOVED}") or location.startswith(f"/badges/{MOVED}") or \
            location.startswith(f"/api/v1/models/{MOVED}"), (path, location)
    assert moved[f"/models/{QWEN}/feed.atom?kind=files"].headers["location"] == f"/models/{MOVED}/feed.atom?kind=files"
    assert moved[f"/models/{QWEN}.md"].headers["location"] == f"/models/{MOVED}.md"
    ids = sorted(v["id"] for v in osv_new.get("vulns", []))
    assert ids == advisories
    # The records published before the rename now name the repo by its new id (ids kept, modified bumped).
    for vuln in osv_new["vulns"]:
        (affected,) = vuln["affected"]
        assert affected["package"]["name"] == MOVED.url() and affected["ranges"][0]["repo"] == MOVED.url(), vuln["id"]
        assert all(str(QWEN) not in ref["url"] for ref in vuln["references"]), vuln["references"]
        assert vuln["database_specific"]["repo"] == str(MOVED) and str(QWEN) not in vuln["summary"]
        assert vuln["modified"] > published_before[vuln["id"]], vuln["id"]
    assert sorted(v["id"] for v in osv_old.get("vulns", [])) == ids
    assert sorted(v["id"] for v in osv_case.get("vulns", [])) == ids


def test_the_listing_of_the_new_id_moves_the_watch_after_a_rename(hubsim_factory: Any, store: Any) -> None:
    sim = hubsim_factory(at="v1")
    settings = _settings(sim)
    now = [datetime.now(timezone.utc)]
    cycle = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="w1",
                      clock=lambda: now[0])
    store.watch(QWEN)
    cycle()
    _rename(sim, QWEN, MOVED)
    store.repos.mark_due([QWEN], now[0])  # the repo's own re-check: its head request meets the 307
    now[0] += timedelta(seconds=61)
    [outcome] = cycle()
    assert isinstance(outcome, (NewRevisions, Unchanged)) and outcome.repo == MOVED and outcome.renamed_from == QWEN
    # Upstream moves on under the new id; the listing (new id only) makes the watch due again.
    sim.advance(str(MOVED))
    now[0] += timedelta(seconds=61)
    outcomes = cycle()
    assert [type(o) for o in outcomes] == [NewRevisions] and outcomes[0].repo == MOVED
    assert len(store.repos.watched()) == 1


def test_ids_in_another_case_are_the_same_repo(hubsim_factory: Any, store: Any) -> None:
    sim = hubsim_factory(at="v1")
    assert store.watch(RepoId.parse("qwen/QWEN-7b"))
    assert not store.watch(QWEN)  # watched already: the same repo in another case
    assert len(store.repos.watched()) == 1
    outcome = _poll(sim, store, RepoId.parse("qwen/QWEN-7b"))
    assert outcome.renamed_from is None  # only the spelling differs: not a rename
    [state] = store.repos.watched()
    assert str(state.repo) == str(QWEN)  # the hub's spelling
    assert store.repos.renames(QWEN) == []
    app = create_app(_settings(sim), store)
    with TestClient(app, follow_redirects=False) as client:
        response = client.get("/models/qwen/QWEN-7b/feed.json")
        assert response.status_code == 308 and response.headers["location"] == f"/models/{QWEN}/feed.json"
        assert client.get(f"/models/{QWEN}").status_code == 200


def test_records_raised_after_a_rename_derive_ids_from_the_first_id() -> None:
    """Advisory ids follow the id the store first knew a repo by, not its name of the day."""
    from datetime import UTC, datetime

    from hubwatch.advisories.advise import plan_advisories
    from hubwatch.diff.changes import HAZARD, make_change
    from hubwatch.domain.records import Kind, RevisionRecord, Severity
    from hubwatch.settings import Settings

    first, renamed = RepoId("acme", "old-name"), RepoId("acme", "new-name")
    revision = RevisionRecord("b" * 40, "a" * 40, datetime(2024, 5, 1, tzinfo=UTC), "add a pickle")
    pickle = make_change(Kind.PICKLE, Severity.HIGH, file="pytorch_model.bin", key=None, old=None, new=1,
                         summary="pytorch_model.bin added", direction=HAZARD)  # fmt: skip
    before = plan_advisories(first, revision, [pickle], [], Settings())
    after = plan_advisories(renamed, revision, [pickle], [], Settings(), id_repo=first)
    assert [r.id for r in after] == [r.id for r in before]
    assert renamed.url() in after[0].osv["affected"][0]["package"]["name"]


def test_a_rename_rewrites_withdrawn_records_too(hubsim_factory: Any, store: Any) -> None:
    """A record withdrawn before the rename keeps its id and stays withdrawn (the same time), but
    names the new id everywhere it named the old one; its `modified` is bumped."""
    from hubwatch.domain.records import AdvisoryRecord
    from hubwatch.domain.times import rfc3339

    sim = hubsim_factory(at="v1")
    store.watch(QWEN)
    _poll(sim, store, QWEN)
    sim.advance(str(QWEN))
    sim.advance(str(QWEN))
    assert isinstance(_poll(sim, store, QWEN), NewRevisions)
    live, *_ = store.advisories.records(QWEN)
    at = (live.modified + timedelta(days=1)).replace(microsecond=0)
    withdrawn = AdvisoryRecord(live.id, live.repo, live.revision_sha, {**live.osv, "modified": rfc3339(at)}, at,
                               withdrawn=at)
    store.revisions.replace_derived(QWEN, {}, [withdrawn])  # as an advisory-model change withdraws it
    app = create_app(_settings(sim), store)
    with TestClient(app) as client:
        before = client.get(f"/v1/vulns/{live.id}").json()
    assert before["withdrawn"] == rfc3339(at) and before["database_specific"]["repo"] == str(QWEN)

    _rename(sim, QWEN, MOVED)
    assert _poll(sim, store, QWEN).renamed_from == QWEN
    with TestClient(app) as client:
        after = client.get(f"/v1/vulns/{live.id}").json()
        query = client.post("/v1/query", json={"package": {"ecosystem": "GIT", "name": MOVED.url()}}).json()
    assert after["id"] == live.id and after["withdrawn"] == before["withdrawn"]
    assert after["modified"] > before["modified"]
    (affected,) = after["affected"]
    assert affected["package"]["name"] == MOVED.url() and affected["ranges"][0]["repo"] == MOVED.url()
    assert [r["url"] for r in after["references"]] == [
        r["url"].replace(f"/{QWEN}/", f"/{MOVED}/") for r in before["references"]
    ] and all(str(QWEN) not in r["url"] for r in after["references"])
    assert after["database_specific"]["repo"] == str(MOVED) and str(QWEN) not in after["summary"]
    assert {k: v for k, v in after.items() if k not in ("modified", "affected", "references", "summary", "details",
                                                        "database_specific")} == \
        {k: v for k, v in before.items() if k not in ("modified", "affected", "references", "summary", "details",
                                                      "database_specific")}
    assert live.id not in {v["id"] for v in query.get("vulns", [])}  # still withdrawn: not listed as affecting
    # A later poll (nothing renamed) leaves it as it is.
    _poll(sim, store, MOVED)
    with TestClient(app) as client:
        assert client.get(f"/v1/vulns/{live.id}").json() == after


def test_an_old_id_watched_apart_from_its_stored_new_id_merges_into_it_unchanged(hubsim_factory: Any, store: Any
                                                                                 ) -> None:
    """The new id polled and stored first; the old id watched later as a row of its own, never polled: its
    poll meets the rename, the two rows merge into the stored one, and the poll goes on from its head."""
    sim = hubsim_factory(at=None)
    _rename(sim, QWEN, MOVED)
    store.watch(MOVED)
    assert isinstance(_poll(sim, store, MOVED), NewRevisions)
    history = [e.revision.sha for e in store.history(MOVED)]
    published = sorted((a.id, a.modified) for a in store.advisories.records(MOVED))
    store.watch(QWEN)
    seen = sim.requests()["seen"]
    outcome = _poll(sim, store, QWEN)
    assert isinstance(outcome, Unchanged) and outcome.repo == MOVED
    assert sim.requests()["seen"] - seen <= 2, "nothing stored is fetched again"  # the head (its 307 and answer)
    assert [e.revision.sha for e in store.history(MOVED)] == history == [e.revision.sha for e in store.history(QWEN)]
    assert sorted((a.id, a.modified) for a in store.advisories.records(MOVED)) == published
    assert len(store.repos.watched()) == 1
