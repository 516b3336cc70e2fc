"""Every text column survives NUL (PostgreSQL refuses it): free text is stored with U+FFFD,
identifiers with NUL are refused with a message naming them, never a driver error."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hubwatch.storage import InvalidRecord, Store
from hubwatch.domain.records import FileRecord, RepoId, RevisionRecord
from storage_helpers import T0, advisory, change, rev, sha

REPO = RepoId("acme", "nul")


def test_free_text_with_nul_is_stored_everywhere(store: Store) -> None:
    first = rev("a")
    hostile = RevisionRecord(first.sha, None, T0, "ti\x00tle", "mes\x00sage", ("au\x00thor",))
    bad_change = change(path="config.json:we\x00ird")
    bad_change = type(bad_change)(bad_change.kind, bad_change.severity, bad_change.path, "sum\x00mary",
                                  {"file": "config.json", "key": "we\x00ird", "old": "\x00", "new": None}, "hazard")
    files = [FileRecord("dir\x00/config.json", 3, "b" * 40, None, None)]
    adv = advisory(REPO, "x_HW-NUL", "a", [{"introduced": "0"}, {"fixed": "\x00" + sha("a")}])
    adv.osv["summary"] = "osv \x00 summary"
    assert store.save_revision(REPO, hostile, files, {}, [bad_change], ("v1", {"note": "\x00"}), [adv])
    store.repos.record_poll(REPO, "error", "boom\x00", T0 + timedelta(hours=1))
    (entry,) = store.history(REPO)
    assert (entry.revision.title, entry.revision.message, entry.revision.authors) == (
        "ti\ufffdtle", "mes\ufffdsage", ("au\ufffdthor",))
    assert (entry.changes[0].path, entry.changes[0].summary) == ("config.json:we\ufffdird", "sum\ufffdmary")
    assert entry.changes[0].detail["key"] == "we\x00ird"  # JSON columns keep it (escaped as \u0000)
    assert entry.estimate == {"note": "\x00"}
    assert store.revisions.snapshot_files(REPO, first.sha)[0][0].path == "dir\ufffd/config.json"
    assert store.advisories.get("x_HW-NUL").osv["summary"] == "osv \x00 summary"
    assert store.repo_state(REPO).last_error == "boom\ufffd"


def test_identifiers_with_nul_are_refused_by_name(store: Store) -> None:
    assert store.save_revision(REPO, rev("a"), [], {}, [], None, [])
    with pytest.raises(InvalidRecord, match="advisory id"):
        store.save_revision(REPO, rev("b", "a"), [], {}, [change()], None,
                            [advisory(REPO, "x_HW\x00", "b", [{"introduced": sha("b")}])])
    assert [e.revision.sha for e in store.history(REPO)] == [sha("a")]  # nothing of b was written
    with pytest.raises(InvalidRecord, match="estimator version"):
        store.revisions.save_estimate(REPO, sha("a"), "v\x00", {})
    with pytest.raises(InvalidRecord, match="worker id"):
        store.leases.claim_due("worker\x00", T0, 10, 60)


def test_lookups_with_nul_find_nothing(store: Store) -> None:
    assert store.save_revision(REPO, rev("a"), [], {}, [], None, [])
    assert store.advisories.get("x_HW\x00") is None
    assert store.revision(REPO, sha("a")[:8] + "\x00") is None
    assert store.advisories.for_commit("\x00" * 40) == []
