"""Content-addressed blobs: sha256 of the raw bytes, zlib-compressed, stored once across all repos."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable
from datetime import datetime

import sqlalchemy as sa
from hubwatch.storage.core.idempotent import dialect_insert, insert_of
from hubwatch.storage.errors import StorageError
from hubwatch.storage.core.prepared import Prepared
from hubwatch.storage.core.tables import BLOBS
from sqlalchemy.engine import Connection

__all__ = ["content_sha256", "get_blob", "get_blobs", "put_blob", "put_blobs", "stored_shas"]

_LEVEL = 6
_STORED = Prepared(lambda _d: sa.select(BLOBS.c.sha256).where(BLOBS.c.sha256.in_(sa.bindparam("shas", expanding=True))))
_INSERT = Prepared(lambda d: insert_of(d, BLOBS).on_conflict_do_nothing(index_elements=["sha256"]))


def content_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def put_blob(conn: Connection, data: bytes, now: datetime) -> str:
    """Store `data` unless a blob with its sha256 exists (also under a concurrent writer); return the sha256."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise StorageError(f"blob content must be bytes, got {type(data).__name__}")
    raw = bytes(data)
    digest = content_sha256(raw)
    exists = conn.execute(sa.select(BLOBS.c.sha256).where(BLOBS.c.sha256 == digest)).first()
    if exists is not None:
        return digest
    values = {
        "sha256": digest,
        "size": len(raw),
        "compression": "zlib",
        "data": zlib.compress(raw, _LEVEL),
        "stored_at": now,
    }
    conn.execute(dialect_insert(conn, BLOBS).values(**values).on_conflict_do_nothing(index_elements=["sha256"]))
    return digest


def stored_shas(conn: Connection, shas: Iterable[str]) -> set[str]:
    """Which of `shas` are stored (one statement)."""
    wanted = sorted(set(shas))
    if not wanted:
        return set()
    return set(conn.execute(_STORED(conn), {"shas": wanted}).scalars())


def put_blobs(conn: Connection, datas: Iterable[bytes], now: datetime) -> list[str]:
    """`put_blob` for many contents in two statements at most (one lookup, one batched insert); their sha256s."""
    raws: list[bytes] = []
    for data in datas:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise StorageError(f"blob content must be bytes, got {type(data).__name__}")
        raws.append(bytes(data))
    digests = [content_sha256(raw) for raw in raws]
    known = stored_shas(conn, digests)
    new: dict[str, bytes] = {d: raw for d, raw in zip(digests, raws) if d not in known}
    if new:
        rows = [{"sha256": d, "size": len(raw), "compression": "zlib", "data": zlib.compress(raw, _LEVEL),
                 "stored_at": now} for d, raw in new.items()]
        conn.execute(_INSERT(conn), rows)
    return digests


def _decode(sha256: str, compression: str, data: bytes) -> bytes:
    if compression == "zlib":
        raw = zlib.decompress(data)
    elif compression == "none":
        raw = bytes(data)
    else:
        raise StorageError(f"blob {sha256} uses unknown compression {compression!r}")
    if content_sha256(raw) != sha256:
        raise StorageError(f"blob {sha256} is corrupt: its content no longer matches its sha256")
    return raw


def get_blob(conn: Connection, sha256: str) -> bytes | None:
    row = conn.execute(sa.select(BLOBS.c.compression, BLOBS.c.data).where(BLOBS.c.sha256 == sha256.lower())).first()
    return None if row is None else _decode(sha256.lower(), row.compression, row.data)


def get_blobs(conn: Connection, shas: Iterable[str]) -> dict[str, bytes]:
    wanted = sorted(set(shas))
    if not wanted:
        return {}
    rows = conn.execute(sa.select(BLOBS.c.sha256, BLOBS.c.compression, BLOBS.c.data).where(BLOBS.c.sha256.in_(wanted)))
    return {r.sha256: _decode(r.sha256, r.compression, r.data) for r in rows}
