"""A dataset renamed upstream (the emulator's 307 under `/api/datasets/…`), through the official client:
one dataset keeps its history under the new id, its advisories are republished under the new
`https://huggingface.co/datasets/…` package, the old id is an alias, and a model of the old org/name
is never touched (issue 33: datasets "polled, renamed and removed like models")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient

from hubwatch.domain.records import RepoId
from hubwatch.feeds import create_app
from hubwatch.settings import Settings
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import NewRevisions, Unchanged, poll_repos

REVIEWS = RepoId.parse("datasets/hubwatch-test/reviews")
MOVED = RepoId.parse("datasets/hubwatch-archive/reviews-v1")
SAME_NAME_MODEL = RepoId.parse("hubwatch-test/reviews")


def _settings(sim: Any) -> Settings:
    return Settings(database_url="sqlite://", hub_endpoint=sim.url, public_url="https://hw.example", hf_token="")


def _poll(sim: Any, store: Any, repo: RepoId) -> Any:
    settings = _settings(sim)
    (outcome,) = poll_repos([repo], hub=HubClient.from_settings(settings), store=store, settings=settings)
    return outcome


def test_a_renamed_dataset_keeps_its_history_and_republishes_under_the_new_package(
    hubsim_factory: Any, datasets_root: Path, store: Any
) -> None:
    sim = hubsim_factory(root=datasets_root, at="v4")
    store.watch(REVIEWS)
    store.watch(SAME_NAME_MODEL)  # a model of the same org/name: another repo, which the rename never reaches
    assert isinstance(_poll(sim, store, REVIEWS), NewRevisions)
    history = [e.revision.sha for e in store.history(REVIEWS)]
    advisories = sorted(a.id for a in store.advisories.records(REVIEWS))
    assert len(history) == 4 and advisories

    answer = httpx.post(f"{sim.url}/_sim/{REVIEWS}/rename", json={"to": MOVED.hub_id})
    assert answer.status_code == 200, answer.text
    outcome = _poll(sim, store, REVIEWS)  # the watch still names the old id: the hub answers the new one
    assert isinstance(outcome, Unchanged) and outcome.repo == MOVED and outcome.renamed_from == REVIEWS
    watched = {str(s.repo) for s in store.repos.watched()}
    assert watched == {str(MOVED), str(SAME_NAME_MODEL)}
    assert [e.revision.sha for e in store.history(MOVED)] == history
    assert [e.revision.sha for e in store.history(REVIEWS)] == history  # the old id: an alias of the one dataset
    assert store.history(SAME_NAME_MODEL) == []  # the model of the old name is still its own, unpolled repo
    [rename] = store.repos.renames(MOVED)
    assert (str(rename.old), str(rename.new)) == (str(REVIEWS), str(MOVED))
    assert sorted(a.id for a in store.advisories.records(MOVED)) == advisories
    packages = {a.osv["affected"][0]["package"]["name"] for a in store.advisories.records(MOVED)}
    assert packages == {"https://huggingface.co/datasets/hubwatch-archive/reviews-v1"}

    # The next revision upstream reaches the renamed dataset, under its new id.
    sim.advance(str(MOVED))
    assert isinstance(_poll(sim, store, MOVED), NewRevisions)
    assert len(store.history(MOVED)) == 5

    with TestClient(create_app(_settings(sim), store), follow_redirects=False) as client:
        old = client.get(f"/datasets/{REVIEWS.hub_id}")
        assert old.status_code == 308 and old.headers["location"] == f"/datasets/{MOVED.hub_id}"
        page = client.get(f"/datasets/{MOVED.hub_id}")
        assert page.status_code == 200 and REVIEWS.hub_id in page.text  # the page says what it was called
        assert client.get(f"/models/{SAME_NAME_MODEL}").status_code == 200  # the model's own (empty) page
