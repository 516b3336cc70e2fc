"""`advisory_keys`: what each upsert indexes, what migration 0014 indexes for stores written before it
(the same rows), and what `advisories_to_plan` finds through it. SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from storage_helpers import T0, advisory, downgrade_to, rev, sha, upgrade_to_head

from hubwatch.domain.records import AdvisoryRecord, RepoId
from hubwatch.storage import Store
from hubwatch.storage.advisories.advisories import OPEN_MATCH, match_digest

REPO, OTHER = RepoId("org", "m"), RepoId("org", "other")


def _with_changes(record: AdvisoryRecord, direction: str, changes: list[Any], repo: RepoId | None = None
                  ) -> AdvisoryRecord:
    osv = {**record.osv, "database_specific": {"direction": direction, "changes": changes}}
    return AdvisoryRecord(record.id, repo or record.repo, record.revision_sha, osv, record.modified, record.withdrawn)


def _fill(store: Store) -> None:
    for repo in (REPO, OTHER):
        store.watch(repo)
        assert store.save_revision(repo, rev("r1"), [], {}, [], None, [])
    keyed = {"detail": {"file": "config.json", "key": "torch_dtype", "old": "fp16", "new": "bf16"}}
    whole = {"detail": {"file": "model.py", "key": None, "files": ["model.py", "util.py"]}}
    records = [
        _with_changes(advisory(REPO, "x_HW-update", "r2", [{"introduced": "0"}, {"fixed": sha("r2")}]), "update",
                      [keyed, whole]),
        _with_changes(advisory(REPO, "x_HW-open", "r2", [{"introduced": sha("r2")}]), "hazard", [keyed]),
        _with_changes(advisory(REPO, "x_HW-closed", "r2", [{"introduced": sha("r2")}, {"fixed": sha("r2")}]),
                      "hazard", [{"detail": {"file": "tokenizer_config.json", "key": "chat_template"}}]),
        advisory(REPO, "x_HW-plain", "r2", [{"introduced": "0"}, {"fixed": sha("r2")}]),  # no changes: another shape
        _with_changes(advisory(REPO, "x_HW-gone", "r2", [{"introduced": "0"}, {"fixed": sha("r2")}],
                               withdrawn=T0), "update", [keyed]),
    ]
    assert store.save_revision(REPO, rev("r2", "r1", day=1), [], {}, [], None, records)
    theirs = _with_changes(advisory(OTHER, "x_HW-theirs", "r2", [{"introduced": sha("r2")}]), "hazard", [keyed])
    assert store.save_revision(OTHER, rev("r2", "r1", day=1), [], {}, [], None, [theirs])


def _rows(store: Store) -> list[tuple[str, int, str]]:
    with store.engine.connect() as conn:
        return sorted((r.advisory_id, int(r.repo_id), r.match)
                      for r in conn.execute(sa.text("SELECT advisory_id, repo_id, match FROM advisory_keys")))


def test_upserts_index_pairs_and_open_records_and_the_migration_indexes_the_same(database_url: str) -> None:
    with Store.open(database_url) as store:
        _fill(store)
        written = _rows(store)
        by_id: dict[str, set[str]] = {}
        for advisory_id, _, match in written:
            by_id.setdefault(advisory_id, set()).add(match)
        dtype = match_digest("config.json", "torch_dtype")
        assert by_id["x_HW-update"] == {dtype, match_digest("model.py", None), match_digest("util.py", None)}
        assert by_id["x_HW-open"] == {dtype, OPEN_MATCH}
        assert by_id["x_HW-closed"] == {match_digest("tokenizer_config.json", "chat_template")}
        assert "x_HW-plain" not in by_id  # fixed, and no pair: nothing a change can undo
        downgrade_to(store.engine, "0013_revisions_repo_date")
        with store.engine.connect() as conn:
            assert "advisory_keys" not in sa.inspect(conn).get_table_names()
        upgrade_to_head(store.engine)
        assert _rows(store) == written


def test_the_plan_reads_the_open_records_and_those_of_the_pairs_of_its_repo(database_url: str) -> None:
    with Store.open(database_url) as store:
        _fill(store)
        ids = lambda found: [a.id for a in found]  # noqa: E731
        assert ids(store.advisories.to_plan(REPO, [])) == ["x_HW-open"]
        assert ids(store.advisories.to_plan(REPO, [("config.json", "torch_dtype")])) == ["x_HW-open", "x_HW-update"]
        assert ids(store.advisories.to_plan(REPO, [("util.py", None)], open_ones=False)) == ["x_HW-update"]
        assert ids(store.advisories.to_plan(REPO, [("tokenizer_config.json", "chat_template")])) == [
            "x_HW-closed", "x_HW-open"]
        assert store.advisories.to_plan(REPO, [], open_ones=False) == []
        assert ids(store.advisories.to_plan(RepoId("ORG", "M"), [])) == ["x_HW-open"]  # any spelling
        assert store.advisories.to_plan(RepoId("org", "unknown"), [("config.json", "torch_dtype")]) == []
        assert ids(store.advisories.to_plan(OTHER, [])) == ["x_HW-theirs"]
        # what is read is the stored record, decoded as every read decodes it
        assert store.advisories.to_plan(REPO, [("config.json", "torch_dtype")]) == [
            store.advisories.get("x_HW-open"), store.advisories.get("x_HW-update")]


def test_a_record_updated_in_place_is_indexed_anew(database_url: str) -> None:
    with Store.open(database_url) as store:
        _fill(store)
        [opened] = store.advisories.to_plan(REPO, [])
        closed = AdvisoryRecord(opened.id, opened.repo, opened.revision_sha,
                                {**opened.osv, "affected": [{"ranges": [{"type": "GIT", "events": [
                                    {"introduced": sha("r2")}, {"fixed": sha("r2")}]}]}]},
                                opened.modified.replace(year=opened.modified.year + 1))
        store.revisions.replace_derived(REPO, {}, [closed])
        assert store.advisories.to_plan(REPO, []) == []
        assert [a.id for a in store.advisories.to_plan(REPO, [("config.json", "torch_dtype")])] == [
            "x_HW-open", "x_HW-update"]
