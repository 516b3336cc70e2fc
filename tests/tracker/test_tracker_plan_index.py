"""A revision's advisories are planned against the records the index finds, not every record of the repo.

`store.advisories.to_plan` reads the open records and those sharing a (file, key) pair with the
revision's changes (`advise_match.change_keys` / `record_keys`, stored in `advisory_keys`). These
tests hold it to the plan made against every record: the pairs never miss an entry a change undoes
(a property over generated entries and changes), a commit-by-commit replay of every bundled history
publishes exactly what the same replay planned against every record publishes (SQLite and
PostgreSQL), and a poll of a deep repo decodes only the few records its change may touch.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given, settings as hsettings, strategies as st

from hubwatch.advisories.advise_match import change_keys, undoes
from hubwatch.domain.clock import system_clock
from hubwatch.domain.advisory_keys import entry_keys, record_keys
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, Direction, FileRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.storage.advisories.store import Advisories
from hubwatch.storage.revisions.store import Revisions
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import poll_repos

FILES = st.sampled_from(["config.json", "generation_config.json", "tokenizer_config.json", ""])
KEYS = st.one_of(st.none(), st.sampled_from(["eos_token_id", "torch_dtype", "a.b"]), st.integers(0, 2), st.just(["x"]))
VALUES = st.one_of(st.none(), st.integers(0, 2), st.sampled_from(["bf16", "fp16"]))
DIRECTIONS = st.sampled_from([Direction.UPDATE.value, Direction.HAZARD.value])


@st.composite
def details(draw: st.DrawFn) -> dict[str, Any]:
    detail: dict[str, Any] = {}
    for name, values in (("file", FILES), ("key", KEYS), ("old", VALUES), ("new", VALUES), ("renamed_from", KEYS)):
        if draw(st.booleans()):
            detail[name] = draw(values)
    if draw(st.booleans()):
        detail["files"] = draw(st.lists(FILES, max_size=3))
    return detail


@st.composite
def changes(draw: st.DrawFn) -> ChangeRecord:
    file, key = draw(FILES), draw(st.one_of(st.none(), st.sampled_from(["eos_token_id", "torch_dtype", "a.b"])))
    path = file if key is None else f"{file}:{key}"
    return ChangeRecord(Kind.CONFIG, Severity.HIGH, path, "s", draw(details()), draw(DIRECTIONS))


@hsettings(max_examples=3000, deadline=None)
@given(change=changes(), detail=details(), direction=DIRECTIONS)
def test_every_entry_a_change_undoes_shares_a_pair_with_it(change: ChangeRecord, detail: dict[str, Any],
                                                          direction: str) -> None:
    entry = {"path": "x", "direction": direction, "detail": detail}
    if undoes(change, entry):  # (what `closes` adds, hazard keys, concerns open records: all read)
        assert change_keys(change) & entry_keys(entry), (change, entry)
    osv = {"database_specific": {"changes": [entry, {"detail": "not a dict"}]}}
    assert record_keys(osv) == entry_keys(entry)


def test_records_of_another_shape_name_no_pairs() -> None:
    for osv in ({}, {"database_specific": None}, {"database_specific": {"changes": "x"}}, {"database_specific": {}}):
        assert record_keys(osv) == frozenset()


class EveryRecord(Advisories):
    """The plan against every record of the repo: what the index must be equivalent to."""

    def to_plan(self, repo: RepoId, pairs: Any, *, open_ones: bool = True) -> list[AdvisoryRecord]:
        return self.records(repo)


def every_record_store(url: str) -> Store:
    store = Store.open(url)
    store.advisories = EveryRecord(store.engine)
    return store


def _published(store: Store, repos: list[RepoId]) -> dict[str, tuple[Any, Any]]:
    return {a.id: (a.osv, a.withdrawn) for repo in repos for a in store.advisories.records(repo)}


def test_commit_by_commit_replay_publishes_what_every_record_plans(
    hubsim_factory: Any, store: Store, histories_root: Path, tmp_path: Path
) -> None:
    sim = hubsim_factory(at="v1")
    oracle = every_record_store(f"sqlite:///{tmp_path / 'every.db'}")
    try:
        settings = Settings(database_url="sqlite://", hub_endpoint=sim.url)
        hub = HubClient.from_settings(settings)
        repos = sorted(RepoId.parse(f.name.replace("__", "/")) for f in histories_root.iterdir())
        for target in (store, oracle):
            for repo in repos:
                target.watch(repo)
        pending = list(repos)
        while True:
            for target in (store, oracle):
                poll_repos(repos, hub=hub, store=target, settings=settings)
            assert _published(store, repos) == _published(oracle, repos)
            advanced = []
            for repo in pending:
                try:
                    sim.advance(str(repo))
                    advanced.append(repo)
                except Exception:  # every version shown
                    continue
            if not advanced:
                break
            pending = advanced
        published = _published(store, repos)
        # The replay went through what the index must find: updates undone and hazards closed.
        assert sum(1 for osv, _ in published.values() if osv["database_specific"].get("reverted_by")) >= 1
        closed = [osv for osv, _ in published.values() if osv["database_specific"]["direction"] == "hazard"
                  and any("fixed" in e for a in osv["affected"] for r in a["ranges"] for e in r["events"])]
        assert closed
    finally:
        oracle.close()


def _deep(store: Store, repo: RepoId, depth: int) -> RevisionRecord:
    """`depth` revisions, each but the first raising an update advisory on its own config key (the
    150th an open hazard instead); the head."""
    start = datetime(2024, 1, 1, tzinfo=UTC)
    store.watch(repo)
    parent: str | None = None
    revision = None
    for i in range(depth):
        sha = f"{i:040x}"
        when = start + timedelta(hours=i)
        revision = RevisionRecord(sha, parent, when, f"update {i}")
        key = f"k{i}"
        entry = {"kind": "config", "severity": "high", "path": f"config.json:{key}", "summary": "s",
                 "direction": "update", "detail": {"file": "config.json", "key": key, "old": 0, "new": 1}}
        hazard = i == 150
        events = [{"introduced": sha}] if hazard else [{"introduced": "0"}, {"fixed": sha}]
        osv = {"id": f"HW-{i}", "modified": when.isoformat(), "published": when.isoformat(),
               "database_specific": {"direction": "hazard" if hazard else "update", "changes": [entry]},
               "affected": [{"ranges": [{"type": "GIT", "events": events}]}]}
        body = b"{}"
        store.save_revision(repo, revision, [FileRecord("config.json", len(body))], {"config.json": body}, [], None,
                            [AdvisoryRecord(f"HW-{i}", repo, sha, osv, when)] if i else [])
        parent = sha
    assert revision is not None
    return revision


def test_the_plan_of_a_deep_repo_decodes_only_what_its_changes_touch(store: Store, decoded: list[str]) -> None:
    repo = RepoId("org", "deep")
    _deep(store, repo, 300)
    decoded.clear()
    found = store.advisories.to_plan(repo, change_keys(ChangeRecord(
        Kind.CONFIG, Severity.HIGH, "config.json:k7", "s", {"file": "config.json", "key": "k7", "old": 1, "new": 0},
        Direction.UPDATE.value)))
    assert [a.id for a in found] == ["HW-7", "HW-150"] and sorted(decoded) == ["HW-150", "HW-7"]
    hazard = store.advisories.get("HW-150")
    decoded.clear()
    assert store.advisories.to_plan(repo, change_keys(ChangeRecord(
        Kind.CONFIG, Severity.HIGH, "config.json:other", "s", {"file": "config.json", "key": "other"},
        Direction.UPDATE.value))) == [hazard]
    assert decoded == ["HW-150"]
    assert len(store.advisories.records(repo)) == 299


class CountingRevisions(Revisions):
    """Revisions that note the whole-repo reads a poll makes."""

    whole_reads: list[str]

    def known_shas(self, repo: RepoId) -> set[str]:
        self.whole_reads.append("known_shas")
        return super().known_shas(repo)


class CountingAdvisories(Advisories):
    """Advisories that note the whole-repo reads a poll makes."""

    whole_reads: list[str]

    def records(self, repo: RepoId | None = None, *, newest: int | None = None) -> list[AdvisoryRecord]:
        self.whole_reads.append("advisories")
        return super().records(repo, newest=newest)


def counting_store(url: str) -> tuple[Store, list[str]]:
    """A store whose revisions and advisories note the whole-repo reads made through them."""
    store = Store.open(url)
    reads: list[str] = []
    revisions = CountingRevisions(store.engine, system_clock, None)  # as Store.open's own
    advisories = CountingAdvisories(store.engine)
    revisions.whole_reads = advisories.whole_reads = reads
    store.revisions, store.advisories = revisions, advisories
    return store, reads


def test_a_poll_that_finds_new_commits_reads_no_whole_repo(hubsim_factory: Any, tmp_path: Path) -> None:
    sim = hubsim_factory(at="v1")
    repo = RepoId.parse("deepseek-ai/DeepSeek-R1")
    store, whole_reads = counting_store(f"sqlite:///{tmp_path / 'counting.db'}")
    try:
        settings = Settings(database_url="sqlite://", hub_endpoint=sim.url)
        hub = HubClient.from_settings(settings)
        store.watch(repo)
        poll_repos([repo], hub=hub, store=store, settings=settings)
        shas = []
        for _ in range(3):  # v2 (generation config), v3 (a hazard), v4 (its revert), a poll each
            sha = sim.advance(str(repo))
            shas.append(sha)
            poll_repos([repo], hub=hub, store=store, settings=settings)
            assert store.head(repo) is not None and store.head(repo).sha == sha  # type: ignore[union-attr]
        assert whole_reads == []
        [hazard] = [a for a in store.advisories.records(repo) if a.osv["database_specific"]["direction"] == "hazard"
                    and not a.osv["database_specific"].get("baseline")]  # v1's custom code is the baseline
        assert {"fixed": shas[2]} in hazard.osv["affected"][0]["ranges"][0]["events"]  # closed by the revert
    finally:
        store.close()
