"""store.repos.watched_ids (which of some ids name a watched repo, as the store spells it: by any
spelling or an id before a rename, a dataset never found for the model of its org/name) and
store.revisions.stored_file (one tracked file of a stored revision), on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from hubwatch.domain.records import FileRecord, RepoId, RepoType
from hubwatch.storage.repos import repos as repos_mod
from storage_helpers import rev

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def ds(org: str, name: str) -> RepoId:
    return RepoId(org, name, RepoType.DATASET)


def test_watched_ids_finds_spellings_and_old_ids_and_keeps_types_apart(store: Any) -> None:
    squad, orca_old, orca, gone = ds("rajpurkar", "squad"), ds("Open-Orca", "OpenOrca"), ds("open-orca", "v2"), ds("x", "gone")
    model = RepoId("rajpurkar", "model-only")
    for repo in (squad, orca_old, gone, model):
        store.watch(repo)
    store.unwatch(gone)
    assert store.repos.rename_repo(orca_old, orca, T0)
    asked = [ds("RAJPURKAR", "SQuAD"), ds("open-orca", "openorca"), gone, ds("rajpurkar", "model-only"),
             ds("nobody", "here")]  # fmt: skip
    found = store.repos.watched_ids(asked)
    assert found == {asked[0]: squad, asked[1]: orca}
    assert str(found[asked[0]]) == "datasets/rajpurkar/squad" and str(found[asked[1]]) == "datasets/open-orca/v2"
    assert store.repos.watched_ids([model, RepoId("rajpurkar", "squad")]) == {model: model}  # the model, not the dataset
    assert store.repos.watched_ids([]) == {}


def test_watched_ids_spans_batches(store: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(repos_mod, "BATCH", 3)  # the batch size only; the queries are real
    names = [ds("org", f"d{i:02d}") for i in range(10)]
    for repo in names[::2]:
        store.watch(repo)
    assert sorted(store.repos.watched_ids(names)) == names[::2]


def test_stored_file_reads_one_file_of_one_revision(store: Any) -> None:
    repo = RepoId("org", "m")
    store.watch(repo)
    first, second = rev("a"), rev("b", "a", day=1)
    files = [FileRecord("README.md", 5), FileRecord("config.json", 2)]
    assert store.save_revision(repo, first, files, {"README.md": b"one", "config.json": b"{}"}, [], None, [])
    assert store.save_revision(repo, second, files[:1], {"README.md": b"two"}, [], None, [])
    assert store.revisions.stored_file(repo, first.sha, "README.md") == b"one"
    assert store.revisions.stored_file(repo, second.sha, "README.md") == b"two"
    assert store.revisions.stored_file(repo, second.sha, "config.json") is None
    assert store.revisions.stored_file(repo, "0" * 40, "README.md") is None
    assert store.revisions.stored_file(ds("org", "m"), first.sha, "README.md") is None  # the dataset is another repo
