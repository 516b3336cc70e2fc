"""Blobs are content-addressed, compressed and stored once across revisions and repos."""

from __future__ import annotations

import hashlib
import os
import zlib

import pytest
import sqlalchemy as sa
from hubwatch.storage import InvalidRecord, StorageError, Store
from hubwatch.domain.records import FileRecord, RepoId
from storage_helpers import rev, sha

A = RepoId("org", "a")
B = RepoId("other-org", "b")


def blob_rows(store: Store) -> list[tuple[str, int, int]]:
    with store.engine.connect() as conn:
        return [
            (r.sha256, r.size, len(r.data))
            for r in conn.execute(sa.text("SELECT sha256, size, data FROM blobs ORDER BY sha256"))
        ]


def test_same_content_in_two_repos_is_one_blob(store: Store) -> None:
    tokenizer = b'{"model": {"vocab": {' + b", ".join(b'"t%d": %d' % (i, i) for i in range(5000)) + b"}}}"
    config = b'{"hidden_size": 4096}'
    files = [FileRecord("tokenizer.json", len(tokenizer)), FileRecord("config.json", len(config))]
    contents = {"tokenizer.json": tokenizer, "config.json": config}
    assert store.save_revision(A, rev("a1"), files, contents, [], None, [])
    assert store.save_revision(B, rev("b1"), files, contents, [], None, [])
    assert store.save_revision(A, rev("a2", "a1"), files, {**contents, "config.json": b"{}"}, [], None, [])
    rows = blob_rows(store)
    assert len(rows) == 3  # tokenizer once, two configs
    by_sha = {r[0]: r for r in rows}
    digest = hashlib.sha256(tokenizer).hexdigest()
    assert by_sha[digest][1] == len(tokenizer)
    assert by_sha[digest][2] < len(tokenizer) / 3  # stored compressed
    assert store.blob(digest) == tokenizer
    assert store.blob(digest.upper()) == tokenizer
    assert store.blob("0" * 64) is None
    listing, got = store.revisions.snapshot_files(B, sha("b1"))
    assert got == contents
    assert {f.path: f.content_sha256 for f in listing}["tokenizer.json"] == digest
    _, got2 = store.revisions.snapshot_files(A, sha("a2"))
    assert got2["config.json"] == b"{}"


@pytest.mark.parametrize("payload", [b"", b"\x00\xff" * 1000, os.urandom(4096), "é ü 中文".encode()])
def test_any_bytes_round_trip(store: Store, payload: bytes) -> None:
    files = [FileRecord("f.bin", len(payload))]
    assert store.save_revision(A, rev("x"), files, {"f.bin": payload}, [], None, [])
    assert store.revisions.snapshot_files(A, sha("x"))[1] == {"f.bin": payload}
    assert store.blob(hashlib.sha256(payload).hexdigest()) == payload


def test_a_file_may_point_at_an_existing_blob_but_not_a_missing_one(store: Store) -> None:
    body = b"shared"
    digest = hashlib.sha256(body).hexdigest()
    store.save_revision(A, rev("x"), [FileRecord("c.json", 6)], {"c.json": body}, [], None, [])
    assert store.save_revision(A, rev("y", "x"), [FileRecord("c.json", 6, content_sha256=digest)], {}, [], None, [])
    assert store.revisions.snapshot_files(A, sha("y"))[1] == {"c.json": body}
    with pytest.raises(InvalidRecord, match="not stored"):
        store.save_revision(A, rev("z", "y"), [FileRecord("c.json", 6, content_sha256="f" * 64)], {}, [], None, [])
    with pytest.raises(InvalidRecord, match="does not match"):
        store.save_revision(
            A, rev("z", "y"), [FileRecord("c.json", 1, content_sha256="f" * 64)], {"c.json": b"x"}, [], None, []
        )
    assert store.revisions.known_shas(A) == {sha("x"), sha("y")}


def test_a_corrupt_blob_is_reported_not_returned(store: Store) -> None:
    body = b"original"
    digest = hashlib.sha256(body).hexdigest()
    store.save_revision(A, rev("x"), [FileRecord("c.json", 8)], {"c.json": body}, [], None, [])
    with store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE blobs SET data = :d"), {"d": zlib.compress(b"tampered")})
    with pytest.raises(StorageError, match="corrupt"):
        store.blob(digest)
