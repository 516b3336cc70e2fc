"""Advisories over real histories polled through the emulator: valid, deterministic, reverts linked."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.domain.records import AdvisoryRecord, RepoId
from hubwatch.tracker.hub import HubClient
from hubwatch.advisories.osv_export import export_files
from hubwatch.tracker.poller import poll_repos
from osv_schema_check import assert_schema_valid

REPOS = [RepoId.parse(r) for r in ("meta-llama/Llama-2-7b-hf", "tiiuae/falcon-7b-instruct", "deepseek-ai/DeepSeek-R1")]


def poll_into_fresh_store(url: str, sim: Any) -> list[AdvisoryRecord]:
    settings = Settings(database_url=url, hub_endpoint=sim.url)
    store = Store.open(url)
    try:
        for repo in REPOS:
            store.watch(repo)
        poll_repos(REPOS, hub=HubClient.from_settings(settings), store=store, settings=settings)
        return store.advisories.records()
    finally:
        store.close()


def shas(root: Path, repo: RepoId) -> dict[str, str]:
    text = (root / f"{repo.org}__{repo.name}" / "HISTORY.tsv").read_text(encoding="utf-8")
    return {r["version"]: r["commit"] for r in csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)}


def test_polling_the_same_history_twice_gives_identical_advisories(
    hubsim_factory: Any, histories_root: Path, tmp_path: Path
) -> None:
    sim = hubsim_factory(at=None)
    first = poll_into_fresh_store(f"sqlite:///{tmp_path / 'a.db'}", sim)
    second = poll_into_fresh_store(f"sqlite:///{tmp_path / 'b.db'}", sim)
    assert first, "real histories produce advisories"
    assert [(r.id, r.osv, r.modified) for r in first] == [(r.id, r.osv, r.modified) for r in second]
    assert export_files(first) == export_files(second)
    for record in first:
        assert_schema_valid(record.osv)
        assert record.osv["affected"][0]["package"]["name"] == f"https://huggingface.co/{record.repo}"
    # at a repo's first revision only what it carries is advised: a baseline hazard record
    for repo in REPOS:
        v1 = shas(histories_root, repo)["v1"]
        at_v1 = [r.osv["database_specific"] for r in first if r.repo == repo and r.revision_sha == v1]
        assert all(ds["baseline"] and ds["direction"] == "hazard" for ds in at_v1)


def _ranges(records: list[AdvisoryRecord], v: dict[str, str]) -> dict[tuple[str, str], list[dict[str, str]]]:
    """(version, direction) → events with commits written as versions."""
    name = {sha: version for version, sha in v.items()}
    out = {}
    for record in records:
        events = record.osv["affected"][0]["ranges"][0]["events"]
        key = (name[record.revision_sha], record.osv["database_specific"]["direction"])
        assert key not in out, f"two {key} records"
        out[key] = [{k: name.get(x, x) for k, x in e.items()} for e in events]
    return out


def test_move_revert_and_reapply_are_linked_not_duplicated(
    hubsim_factory: Any, histories_root: Path, tmp_path: Path
) -> None:
    """falcon-7b-instruct: v4 moves the model into the library, v5 reverts it, v6 re-applies it.

    Issue 9's model: the auto_map entries v4 added are custom code (a hazard, closed by v5 which
    removed them, open again from v6); everything else each commit did is an update, and an update
    that undoes an earlier one is linked to it (`related`), never turned into a hazard.
    """
    sim = hubsim_factory(at=None)
    records = poll_into_fresh_store(f"sqlite:///{tmp_path / 'c.db'}", sim)
    falcon = RepoId.parse("tiiuae/falcon-7b-instruct")
    v = shas(histories_root, falcon)
    mine = [r for r in records if r.repo == falcon]
    ranges = _ranges(mine, v)
    assert ranges[("v4", "hazard")] == [{"introduced": "v4"}, {"fixed": "v5"}]  # custom code added, removed by v5
    assert ranges[("v6", "hazard")] == [{"introduced": "v6"}]  # added again, still carried by the latest
    assert ("v5", "hazard") not in ranges  # undoing the move is no hazard
    for version in ("v4", "v5", "v6"):
        assert ranges[(version, "update")] == [{"introduced": "0"}, {"fixed": version}]
    by_key = {(r.revision_sha, r.osv["database_specific"]["direction"]): r for r in mine}
    up4, up5, up6 = (by_key[(v[n], "update")] for n in ("v4", "v5", "v6"))
    assert up5.id in up4.osv["related"] and up4.id in up5.osv["related"] and up5.id in up6.osv["related"]
    assert {c["kind"] for c in by_key[(v["v4"], "hazard")].osv["database_specific"]["changes"]} == {"custom_code"}
    assert not any("fixed in this revision" in r.osv["summary"] for r in records)

    deepseek = RepoId.parse("deepseek-ai/DeepSeek-R1")
    ranges = _ranges([r for r in records if r.repo == deepseek], shas(histories_root, deepseek))
    # add_bos_token turned off (the bos token no longer added: a hazard), turned on again by v4
    assert ranges[("v3", "hazard")] == [{"introduced": "v3"}, {"fixed": "v4"}]
    assert ("v4", "update") not in ranges and ("v4", "hazard") not in ranges  # the restore closes it, no more
