"""save_revision: one transaction, idempotent (also under concurrency); history reads it back."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest
import sqlalchemy as sa
from hubwatch.storage import AmbiguousRevision, InvalidRecord, Store
from hubwatch.domain.records import ChangeRecord, FileRecord, Kind, RepoId, RevisionRecord, Severity
from storage_helpers import T0, advisory, change, rev, sha

REPO = RepoId("meta-llama", "Llama-2-7b-hf")
TABLES = ("revisions", "file_versions", "changes", "estimates", "advisories", "advisory_events", "blobs")


def counts(store: Store) -> dict[str, int]:
    with store.engine.connect() as conn:
        return {t: conn.execute(sa.text(f"SELECT count(*) FROM {t}")).scalar_one() for t in TABLES}


def save(store: Store, label: str, parent: str | None = None, **kw: object) -> bool:
    files = kw.pop("files", [FileRecord("config.json", 10, "b" * 40)])
    contents = kw.pop("contents", {"config.json": f'{{"v": "{label}"}}'.encode()})
    return store.save_revision(
        REPO,
        rev(label, parent, day=int(kw.pop("day", 0))),  # type: ignore[arg-type]
        files,  # type: ignore[arg-type]
        contents,  # type: ignore[arg-type]
        kw.pop("changes", [change()]),  # type: ignore[arg-type]
        kw.pop("estimate", ("est-1", {"params": 7e9})),  # type: ignore[arg-type]
        kw.pop("advisories", []),  # type: ignore[arg-type]
    )


def test_save_then_read_back_everything(store: Store) -> None:
    store.watch(REPO)
    files = [
        FileRecord("config.json", 20, "c" * 40),
        FileRecord("model.safetensors", 13_000_000_000, "d" * 64, lfs_sha256="e" * 64),
    ]
    body = b'{"max_position_embeddings": 4096}'
    changes = [
        change(),
        change(Kind.PICKLE, Severity.HIGH, "pytorch_model.bin", note="added"),
        change(Kind.CHAT_TEMPLATE, Severity.LOW, "tokenizer_config.json:chat_template", direction="update"),
    ]
    assert store.save_revision(REPO, rev("a"), files, {"config.json": body}, changes, ("v1", {"p": 1}), [])
    entry = store.revision(REPO, sha("a"))
    assert entry is not None
    assert entry.revision == rev("a") and entry.position == 0 and entry.repo == REPO
    assert entry.revision.date == T0 and entry.revision.date.tzinfo is not None
    assert entry.revision.authors == ("alice", "bob")
    assert entry.changes == changes
    assert [c.detail for c in entry.changes] == [c.detail for c in changes]
    assert [c.direction for c in entry.changes] == ["hazard", "hazard", "update"]
    assert entry.estimate == {"p": 1} and entry.estimator_version == "v1"
    listing, contents = store.revisions.snapshot_files(REPO, sha("a"))
    assert [f.path for f in listing] == ["config.json", "model.safetensors"]
    assert listing[1].lfs_sha256 == "e" * 64 and listing[1].size == 13_000_000_000
    assert listing[1].content_sha256 is None and listing[0].content_sha256 is not None
    assert contents == {"config.json": body}
    assert store.head(REPO) == rev("a")
    assert store.revisions.known_shas(REPO) == {sha("a")}
    [state] = store.repos.watched()
    assert state.head_sha == sha("a") and state.revision_count == 1


def test_history_is_oldest_first_with_positions(store: Store) -> None:
    store.watch(REPO)
    labels = ["a", "b", "c", "d"]
    for i, label in enumerate(labels):
        assert save(store, label, labels[i - 1] if i else None, day=i, changes=[change(summary_of=label)] if i else [])
    history = store.history(REPO)
    assert [h.revision.sha for h in history] == [sha(x) for x in labels]
    assert [h.position for h in history] == [0, 1, 2, 3]
    assert history[0].changes == [] and history[2].changes[0].detail["summary_of"] == "c"
    assert store.head(REPO) == rev("d", "c", day=3)
    assert store.repos.watched()[0].revision_count == 4
    # A revision whose parent is not stored (e.g. a limited backfill) is appended.
    assert save(store, "e", "unknown-parent", day=4)
    assert store.history(REPO)[-1].position == 4


def test_a_rewrite_takes_the_place_after_its_parent(store: Store) -> None:
    for i, label in enumerate(["a", "b", "c"]):
        save(store, label, ["a", "b", "c"][i - 1] if i else None, day=i)
    assert save(store, "b2", "a", day=5)  # force-push: b and c abandoned, b2 follows a
    history = store.history(REPO)
    assert [(h.revision.sha, h.position) for h in history] == [
        (sha("a"), 0),
        (sha("b"), 1),
        (sha("b2"), 1),
        (sha("c"), 2),
    ]


def test_second_save_returns_false_and_writes_nothing(store: Store) -> None:
    assert save(store, "a")
    before = counts(store)
    assert not save(
        store, "a", changes=[change(), change()], estimate=("est-2", {}), contents={"config.json": b"other"}
    )
    assert counts(store) == before
    assert store.revision(REPO, sha("a")).estimator_version == "est-1"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "bad",
    [
        {"changes": [change(), ChangeRecord("not-a-kind", Severity.LOW, "x", "s")]},  # type: ignore[arg-type]
        {"changes": [change(), replace(change(), direction="sideways")]},
        {"changes": [change(), change(value=float("nan"))]},
        {"advisories": "duplicate"},
        {"advisories": "unknown revision"},
        {"estimate": ("v", {"bad": {1, 2}})},
        {"contents": {"config.json": b"{}", "not-listed.json": b"{}"}},
    ],
    ids=["kind", "direction", "nan-detail", "duplicate-advisory", "advisory-revision", "estimate", "contents"],
)
def test_a_failure_leaves_nothing_of_the_revision(store: Store, bad: dict[str, object]) -> None:
    assert save(store, "a")
    before = counts(store)
    if bad.get("advisories") == "duplicate":
        adv = advisory(REPO, "x_HUBWATCH-2024-0001", "b", [{"introduced": sha("b")}])
        bad = {"advisories": [adv, adv]}
    elif bad.get("advisories") == "unknown revision":
        bad = {"advisories": [advisory(REPO, "x_HUBWATCH-2024-0002", "zzz", [{"introduced": "0"}])]}
    with pytest.raises(InvalidRecord):
        save(store, "b", "a", **({"contents": {"config.json": b"new content, new blob"}} | bad))
    assert counts(store) == before
    assert store.revisions.known_shas(REPO) == {sha("a")}
    assert store.repos.watched() == [] or store.repos.watched()[0].head_sha == sha("a")
    assert save(store, "b", "a")  # and the same revision saves fine once the input is right


def test_timestamps_must_be_tz_aware_and_come_back_in_utc(store: Store) -> None:
    naive = replace(rev("a"), date=datetime(2024, 1, 1, 12))
    with pytest.raises(InvalidRecord, match="time zone"):
        store.save_revision(REPO, naive, [], {}, [], None, [])
    paris = timezone(timedelta(hours=2))
    local = replace(rev("a"), date=datetime(2024, 6, 1, 14, 30, tzinfo=paris))
    assert store.save_revision(REPO, local, [], {}, [], None, [])
    got = store.head(REPO)
    assert got is not None and got.date == datetime(2024, 6, 1, 12, 30, tzinfo=UTC)
    assert got.date.utcoffset() == timedelta(0)


def test_bad_shas_are_refused(store: Store) -> None:
    with pytest.raises(InvalidRecord, match="40-hex"):
        store.save_revision(REPO, replace(rev("a"), sha="ABC"), [], {}, [], None, [])
    save(store, "a")
    # Lookups of text that cannot be a commit prefix find nothing (web routes pass user input).
    for text in ["abc", "main", "g" * 40, sha("a")[:6], sha("a") + "0"]:
        assert store.revision(REPO, text) is None
        assert store.revisions.snapshot_files(REPO, text) == ([], {})
        assert store.advisories.affecting(REPO, text) == []
        assert store.advisories.for_commit(text) == []
    assert store.revision(REPO, sha("a")[:7]) is not None


def test_revision_by_unique_prefix(store: Store) -> None:
    labels = [f"r{i}" for i in range(40)]
    for label in labels:
        save(store, label)
    full = sha("r7")
    entry = store.revision(REPO, full[:7].upper())
    assert entry is not None and entry.revision.sha == full
    assert store.revision(REPO, "0000000") is None
    assert store.revision(RepoId("nobody", "nothing"), full) is None
    # Two stored shas sharing a 7-char prefix: the prefix is ambiguous, a longer one is not.
    shas = [sha(x) for x in labels]
    twins = [(a, b) for a in shas for b in shas if a < b and a[:2] == b[:2]]
    a, b = twins[0]
    common = next(i for i in range(40) if a[i] != b[i])
    with store.engine.begin() as conn:  # make the pair share 7 characters by renaming one of them
        forged = a[: max(common, 7)] + b[max(common, 7) :]
        conn.execute(sa.text("UPDATE revisions SET sha = :new WHERE sha = :old"), {"new": forged, "old": b})
    with pytest.raises(AmbiguousRevision):
        store.revision(REPO, a[:7])
    assert store.revision(REPO, a).revision.sha == a  # type: ignore[union-attr]


def test_concurrent_saves_of_one_revision_store_it_once(store: Store) -> None:
    store.watch(REPO)
    save(store, "a")
    results: list[bool] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def worker() -> None:
        try:
            barrier.wait()
            results.append(
                save(
                    store,
                    "b",
                    "a",
                    advisories=[advisory(REPO, "x_HUBWATCH-2024-0003", "b", [{"introduced": sha("b")}])],
                )
            )
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert sorted(results) == [False, False, False, True]
    c = counts(store)
    assert c["revisions"] == 2 and c["changes"] == 2 and c["advisories"] == 1 and c["estimates"] == 2


def test_save_estimate_adds_a_version(store: Store) -> None:
    save(store, "a")
    assert store.revisions.save_estimate(REPO, sha("a"), "est-2", {"params": 8e9})
    entry = store.revision(REPO, sha("a"))
    assert entry is not None and entry.estimator_version == "est-2" and entry.estimate == {"params": 8e9}
    assert not store.revisions.save_estimate(REPO, sha("zz"), "est-2", {})


def test_a_writer_racing_an_open_transaction_gets_false(store: Store) -> None:
    """Writer 1 has inserted the revision but not committed; writer 2 must end with False, not an error."""
    from hubwatch.storage.revisions import revisions
    from hubwatch.storage.core.engine import write_transaction

    save(store, "a")
    outcome: list[object] = []
    with write_transaction(store.engine) as conn:
        revisions.save_revision(conn, REPO, rev("b", "a"), [], {}, [change()], None, [], T0)
        thread = threading.Thread(target=lambda: outcome.append(save(store, "b", "a")))
        thread.start()
        thread.join(0.5)
        assert thread.is_alive()  # writer 2 waits on writer 1 (SQLite: the write lock; PG: the unique key)
    thread.join(30)
    assert outcome == [False]
    assert counts(store)["revisions"] == 2 and counts(store)["changes"] == 2


def test_hostile_text_is_stored_not_refused(store: Store) -> None:
    """NUL and lone surrogates (both possible in remote JSON) must not make a revision unstorable."""
    evil = "eos\x00token\ud800"
    c = ChangeRecord(
        Kind.SPECIAL_TOKENS,
        Severity.HIGH,
        f"config.json:{evil}",
        f"{evil} → 2",
        {"file": "config.json", "key": evil, "old": evil, "new": {evil: evil}},
    )
    hostile = replace(rev("a"), title=evil, message=evil, authors=(evil,))
    assert store.save_revision(REPO, hostile, [FileRecord(evil, 1)], {evil: b"\x00"}, [c], None, [])
    store.repos.record_poll(REPO, "error", evil, T0)
    entry = store.revision(REPO, sha("a"))
    assert entry is not None
    assert entry.revision.title == "eos\ufffdtoken\ufffd" and entry.revision.authors == ("eos\ufffdtoken\ufffd",)
    assert entry.changes[0].path == "config.json:eos\ufffdtoken\ufffd"
    assert entry.changes[0].detail == c.detail  # JSON keeps the exact text
    assert store.revisions.snapshot_files(REPO, sha("a"))[1] == {"eos\ufffdtoken\ufffd": b"\x00"}
    assert store.repos.watched() == [] and store.repo_state(REPO).last_error == "eos\ufffdtoken\ufffd"  # type: ignore[union-attr]


def test_a_prefix_finds_exactly_the_revisions_that_start_with_it(store: Store) -> None:
    """Prefix lookups (a range on the sha index, not LIKE) find what `startswith` finds: one, several
    (ambiguous) or none, at the ends of the hex range too."""
    import random

    rng = random.Random(7)
    repo = RepoId("prefix", "lookup")
    shas = [f"{rng.getrandbits(160):040x}" for _ in range(150)] + ["f" * 40, "0" * 40, "f" * 7 + "0" * 33]
    parent = None
    for i, full in enumerate(shas):
        assert store.save_revision(repo, RevisionRecord(full, parent, T0 + timedelta(hours=i), f"c{i}"), [], {}, [],
                                   None, [])
        parent = full
    prefixes = [s[:n] for s in shas[::7] for n in (7, 9, 40)] + ["fffffff", "0000000", "ffffffff", "abcdef0"]
    prefixes += [f"{rng.getrandbits(28):07x}" for _ in range(40)]
    for prefix in prefixes:
        matching = [s for s in shas if s.startswith(prefix)]
        if len(matching) > 1:
            with pytest.raises(AmbiguousRevision):
                store.revision(repo, prefix)
        else:
            found = store.revision(repo, prefix)
            assert (found.revision.sha if found else None) == (matching[0] if matching else None), prefix
        assert store.revisions.repos_holding(prefix) == ([repo] if matching else []), prefix


def test_add_file_adds_a_derived_file_once_and_raises_the_history_version(store: Store) -> None:
    """A dataset head's late parquet conversion joins its stored listing: once, idempotent, and what
    is derived from the listing (keyed on the history version) goes stale."""
    store.watch(REPO)
    assert save(store, "a")
    before = counts(store)
    version = store.summary(REPO)
    document = b'{"commit": "c0ffee", "configs": {}}'
    record = FileRecord("/refs/convert/parquet", len(document), None)
    assert store.revisions.add_file(REPO, sha("a"), record, document)
    assert store.revisions.stored_file(REPO, sha("a"), "/refs/convert/parquet") == document
    listing, contents = store.revisions.snapshot_files(REPO, sha("a"))
    assert {f.path for f in listing} == {"config.json", "/refs/convert/parquet"} and contents["/refs/convert/parquet"] == document
    after = store.summary(REPO)
    assert version is not None and after is not None and after.version == version.version + 1
    assert counts(store) == before | {"file_versions": before["file_versions"] + 1, "blobs": before["blobs"] + 1}

    # Again (another worker, a repeated poll), or other content for the same path: the first one stays.
    assert not store.revisions.add_file(REPO, sha("a"), record, document)
    assert not store.revisions.add_file(REPO, sha("a"), FileRecord(record.path, 3, None), b"new")
    assert store.revisions.stored_file(REPO, sha("a"), "/refs/convert/parquet") == document
    assert counts(store)["blobs"] == before["blobs"] + 1 and store.summary(REPO) == after  # no blob left behind
    # A revision not stored gets nothing; bad input is refused by name, nothing written.
    assert not store.revisions.add_file(REPO, sha("zz"), record, document)
    with pytest.raises(InvalidRecord, match="content_sha256"):
        store.revisions.add_file(REPO, sha("a"), FileRecord("/other", 3, None, content_sha256="0" * 64), b"abc")
    assert counts(store) == before | {"file_versions": before["file_versions"] + 1, "blobs": before["blobs"] + 1}


def test_replace_derived_adds_its_files_in_the_same_transaction(store: Store) -> None:
    """Re-derived results and the derived file they were derived with land together or not at all."""
    store.watch(REPO)
    assert save(store, "a")
    document = b'{"commit": "c0ffee"}'
    record = FileRecord("/refs/convert/parquet", len(document), None)
    bad = {sha("a"): [change()], sha("zz"): [change()]}  # the second revision is not stored: refused
    with pytest.raises(InvalidRecord, match="is not stored"):
        store.revisions.replace_derived(REPO, bad, [], {sha("a"): (record, document)})
    assert store.revisions.stored_file(REPO, sha("a"), record.path) is None  # rolled back with the rest
    newer = [change(Kind.SPLITS, Severity.MEDIUM, "/refs/convert/parquet")]
    store.revisions.replace_derived(REPO, {sha("a"): newer}, [], {sha("a"): (record, document)})
    assert store.revisions.stored_file(REPO, sha("a"), record.path) == document
    entry = store.revision(REPO, sha("a"))
    assert entry is not None and entry.changes == newer
