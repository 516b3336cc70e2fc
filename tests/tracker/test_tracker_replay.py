"""Real repo histories replayed through the emulator: every revision, in order, with its changes.

The expected change kinds per version come from each history's HISTORY.tsv `what_changed`.
Runs on SQLite and PostgreSQL (the `store` fixture).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from hubwatch.settings import Settings
from hubwatch.domain.records import Kind, RepoId, Severity
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import NewRevisions, Unchanged, poll_repos

# version → change kinds its `what_changed` line names (each must appear among the version's changes)
EXPECTED: dict[str, dict[str, set[Kind]]] = {
    "meta-llama/Llama-2-7b-hf": {
        "v2": {Kind.TOKENIZER},  # special-token AddedToken flags changed, use_fast=false added
        "v3": {Kind.TOKENIZER},  # use_fast removed
        "v4": {Kind.METADATA},  # config re-saved: _name_or_path (+ max_length) added
        "v5": {Kind.SPECIAL_TOKENS},  # generation_config pad_token_id 32000 -> 0
        "v6": {Kind.CONTEXT},  # max_position_embeddings 2048 -> 4096
        "v7": set(),  # stray max_length removed
        "v8": {Kind.GENERATION_DEFAULTS},  # max_length=4096 added to generation_config
        "v9": {Kind.METADATA},  # _from_model_config removed
        "v10": {Kind.SPECIAL_TOKENS},  # pad_token_id removed
        "v11": {Kind.TOKENIZER},  # padding_side=right added
        "v12": {Kind.GENERATION_DEFAULTS},  # do_sample, temperature, top_p
    },
    "Qwen/Qwen-7B": {
        "v2": set(),  # formatting-only re-save: checked below to carry no semantic change
        "v3": {Kind.CONTEXT},  # max_position_embeddings and model_max_length 8192 -> 32768
    },
    "THUDM/chatglm-6b": {
        "v2": {Kind.SPECIAL_TOKENS},  # pad_token_id=20003 added
        "v3": {Kind.ARCHITECTURE, Kind.SPECIAL_TOKENS},  # vocab_size slimmed, token ids remapped
        "v4": {Kind.SPECIAL_TOKENS},  # eos_token </s> -> <eop>
    },
    "tiiuae/falcon-7b-instruct": {
        "v2": {Kind.SPECIAL_TOKENS, Kind.TOKENIZER},  # tokenizer files added
        "v3": {Kind.SPECIAL_TOKENS},  # bos/eos 1/2 -> 11
        "v4": {Kind.ARCHITECTURE, Kind.CUSTOM_CODE, Kind.SPECIAL_TOKENS},  # in-library move
        "v5": {Kind.ARCHITECTURE, Kind.CUSTOM_CODE, Kind.SPECIAL_TOKENS},  # revert of the move
        "v6": {Kind.ARCHITECTURE, Kind.CUSTOM_CODE, Kind.SPECIAL_TOKENS},  # move re-applied
    },
    "deepseek-ai/DeepSeek-R1": {
        "v2": {Kind.GENERATION_DEFAULTS},  # generation_config.json added
        "v3": {Kind.SPECIAL_TOKENS},  # add_bos_token true -> false
        "v4": {Kind.SPECIAL_TOKENS},  # reverted false -> true
    },
}


def rows(root: Path, repo: str) -> list[dict[str, str]]:
    text = (root / repo.replace("/", "__") / "HISTORY.tsv").read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))


def setup(sim: Any, store: Any) -> tuple[HubClient, Settings]:
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url)
    return HubClient.from_settings(settings), settings


def test_backfill_replays_every_revision_in_order(hubsim_factory: Any, store: Any, histories_root: Path) -> None:
    sim = hubsim_factory(at=None)
    hub, settings = setup(sim, store)
    repos = [RepoId.parse(r) for r in EXPECTED]
    for repo in repos:
        store.watch(repo)
    outcomes = poll_repos(repos, hub=hub, store=store, settings=settings)
    assert all(isinstance(o, NewRevisions) for o in outcomes), outcomes
    for repo, outcome in zip(repos, outcomes, strict=True):
        table = rows(histories_root, str(repo))
        shas = [r["commit"] for r in table]
        assert list(outcome.shas) == shas
        history = store.history(repo)
        assert [e.revision.sha for e in history] == shas
        assert [e.revision.parent for e in history] == [None, *shas[:-1]]
        assert [e.position for e in history] == list(range(len(shas)))
        assert [e.revision.title for e in history] == [r["message"].split("\n")[0] for r in table]
        # The first revision is the starting state: only what it carries is advised (a baseline hazard).
        for record in (store.advisories.get(i) for i in history[0].advisory_ids):
            assert record is not None and record.osv["database_specific"]["baseline"] is True
            assert record.osv["database_specific"]["direction"] == "hazard"
        # …described at info, each record keeping the severity it would have had as a change
        assert history[0].changes and all(c.severity == Severity.INFO for c in history[0].changes)
        assert all("severity_if_changed" in c.detail for c in history[0].changes)
        for row, entry in zip(table[1:], history[1:], strict=True):
            kinds = {c.kind for c in entry.changes}
            wanted = EXPECTED[str(repo)][row["version"]]
            assert wanted <= kinds, f"{repo} {row['version']} ({row['what_changed']}): got {sorted(kinds)}"
            if (str(repo), row["version"]) != ("Qwen/Qwen-7B", "v2"):  # the formatting-only re-save
                assert entry.changes, f"{repo} {row['version']} has no change recorded"
            assert entry.estimate is not None and entry.estimator_version


def test_formatting_only_resave_is_no_semantic_change(hubsim_factory: Any, store: Any) -> None:
    sim = hubsim_factory(at=None)
    hub, settings = setup(sim, store)
    repo = RepoId.parse("Qwen/Qwen-7B")
    store.watch(repo)
    poll_repos([repo], hub=hub, store=store, settings=settings)
    v2 = store.history(repo)[1]
    assert v2.revision.title == "format"
    assert all(c.kind == Kind.METADATA and c.severity == Severity.INFO for c in v2.changes), v2.changes
    assert v2.advisory_ids == []


def test_a_revert_closes_the_advisory_it_undoes(hubsim_factory: Any, store: Any, histories_root: Path) -> None:
    sim = hubsim_factory(at=None)
    hub, settings = setup(sim, store)
    repo = RepoId.parse("deepseek-ai/DeepSeek-R1")
    store.watch(repo)
    poll_repos([repo], hub=hub, store=store, settings=settings)
    v1, v2, v3, v4 = (r["commit"] for r in rows(histories_root, str(repo)))
    raised = {a.id for a in store.advisories.affecting(repo, v3)} - {a.id for a in store.advisories.affecting(repo, v2)}
    assert raised, "the add_bos_token change of v3 should affect v3"
    assert not raised & {a.id for a in store.advisories.affecting(repo, v4)}, "the v4 revert should fix it"


def test_new_commits_after_advance_are_picked_up_in_order(
    hubsim_factory: Any, store: Any, histories_root: Path
) -> None:
    sim = hubsim_factory(at="v1")
    hub, settings = setup(sim, store)
    repo = RepoId.parse("meta-llama/Llama-2-7b-hf")
    shas = [r["commit"] for r in rows(histories_root, str(repo))]
    store.watch(repo)
    (first,) = poll_repos([repo], hub=hub, store=store, settings=settings)
    assert isinstance(first, NewRevisions) and first.shas == (shas[0],)
    # Three upstream commits land between two polls: all are taken, not just the head.
    for _ in range(3):
        sim.advance(str(repo))
    (second,) = poll_repos([repo], hub=hub, store=store, settings=settings)
    assert isinstance(second, NewRevisions) and list(second.shas) == shas[1:4]
    assert [e.revision.sha for e in store.history(repo)] == shas[:4]
    # Polling again adds nothing: one request, no new revision, advisories unchanged.
    before = sorted(a.id for a in store.advisories.records(repo))
    (third,) = poll_repos([repo], hub=hub, store=store, settings=settings)
    assert third == Unchanged(repo, shas[3])
    assert [e.revision.sha for e in store.history(repo)] == shas[:4]
    assert sorted(a.id for a in store.advisories.records(repo)) == before
    sim.advance(str(repo))
    (fourth,) = poll_repos([repo], hub=hub, store=store, settings=settings)
    assert isinstance(fourth, NewRevisions) and fourth.shas == (shas[4],)
    assert store.history(repo)[4].revision.parent == shas[3]


@pytest.mark.parametrize("limit", [2])
def test_backfill_limit_keeps_the_newest_commits(
    hubsim_factory: Any, store: Any, histories_root: Path, limit: int
) -> None:
    sim = hubsim_factory(at=None)
    hub, settings = setup(sim, store)
    settings = settings.model_copy(update={"backfill_limit": limit})
    repo = RepoId.parse("THUDM/chatglm-6b")
    shas = [r["commit"] for r in rows(histories_root, str(repo))]
    store.watch(repo)
    (outcome,) = poll_repos([repo], hub=hub, store=store, settings=settings)
    assert isinstance(outcome, NewRevisions) and list(outcome.shas) == shas[-limit:]
    history = store.history(repo)
    assert history[0].revision.parent == shas[-limit - 1]  # the real parent, though not stored
    # Compared with nothing: a starting state, whose custom code (auto_map, from the first commit on)
    # is a baseline hazard record introduced at the oldest revision kept.
    (baseline,) = [store.advisories.get(i) for i in history[0].advisory_ids]
    assert baseline.osv["database_specific"]["baseline"] is True
    assert baseline.osv["affected"][0]["ranges"][0]["events"] == [{"introduced": shas[-limit]}]
    assert baseline.osv["database_specific"]["kinds"] == ["custom_code"]


@pytest.fixture
def commit_pages() -> Any:
    """The commit-list requests huggingface_hub sends (its client built with a recording hook)."""
    import httpx2
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils._http import default_client_factory, hf_request_event_hook

    pages: list[str] = []

    def record(request: httpx2.Request) -> None:
        if "/commits/" in request.url.path:
            pages.append(str(request.url))

    set_client_factory(lambda: httpx2.Client(event_hooks={"request": [hf_request_event_hook, record]},
                                             follow_redirects=True, timeout=None))
    try:
        yield pages
    finally:
        set_client_factory(default_client_factory)


def test_a_poll_lists_one_page_of_commits_however_long_the_history(
    hubsim_factory: Any, store: Any, histories_root: Path, commit_pages: list[str]
) -> None:
    """Each poll after an upstream commit reads the commit list only as far as the stored head."""
    sim = hubsim_factory(at="v1", page_size=2)
    hub, settings = setup(sim, store)
    repo = RepoId.parse("meta-llama/Llama-2-7b-hf")
    shas = [r["commit"] for r in rows(histories_root, str(repo))]
    store.watch(repo)
    poll_repos([repo], hub=hub, store=store, settings=settings)
    asked = []
    for version in range(1, len(shas)):
        sim.advance(str(repo))
        commit_pages.clear()
        (outcome,) = poll_repos([repo], hub=hub, store=store, settings=settings)
        assert isinstance(outcome, NewRevisions) and outcome.shas == (shas[version],)
        asked.append(len(commit_pages))
    assert asked == [1] * (len(shas) - 1)  # [new, stored head] is the first page, at any depth
    assert [e.revision.sha for e in store.history(repo)] == shas


def test_the_backfill_limit_holds_on_later_polls(hubsim_factory: Any, store: Any, histories_root: Path) -> None:
    """Commits older than the backfill limit stay unstored when upstream moves on."""
    sim = hubsim_factory(at="v5")
    hub, settings = setup(sim, store)
    settings = settings.model_copy(update={"backfill_limit": 2})
    repo = RepoId.parse("meta-llama/Llama-2-7b-hf")
    shas = [r["commit"] for r in rows(histories_root, str(repo))]
    store.watch(repo)
    (first,) = poll_repos([repo], hub=hub, store=store, settings=settings)
    assert isinstance(first, NewRevisions) and list(first.shas) == shas[3:5]
    sim.advance(str(repo))
    (second,) = poll_repos([repo], hub=hub, store=store, settings=settings)
    assert isinstance(second, NewRevisions) and second.shas == (shas[5],)
    assert [e.revision.sha for e in store.history(repo)] == shas[3:6]
