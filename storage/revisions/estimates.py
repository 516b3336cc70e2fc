"""Estimates stored compactly: each distinct estimate body once, each revision a row pointing at it.

Most commits change no config, and their estimates are equal but for the `revision` they name.
That key is split off into `estimates.revision_json` (its JSON; NULL when the estimate has no such
key) and the body holds null in its place, so the body is the same for every such revision and is
stored once, keyed by the sha256 of its canonical JSON. Reading joins the two back into the very
dict that was written (same keys, same order, same values).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from hubwatch.storage.errors import InvalidRecord
from hubwatch.storage.core.idempotent import insert_of
from hubwatch.storage.core.prepared import Prepared
from hubwatch.storage.core.tables import ESTIMATE_BODIES, ESTIMATES
from sqlalchemy.engine import Connection

__all__ = ["body_of", "drop_unused_bodies", "estimate_data", "insert_estimate", "joined"]

_NAMED = "revision"  # the one key of an estimate that names its revision
_INSERT_BODY = Prepared(lambda d: insert_of(d, ESTIMATE_BODIES).on_conflict_do_nothing(index_elements=["sha256"]))
_INSERT_ROW = Prepared(lambda _d: sa.insert(ESTIMATES))


def body_of(data: dict[str, Any], what: str = "estimate") -> tuple[str, dict[str, Any], str | None]:
    """(sha256 of the body, the body, the JSON of the revision it names or None) of `data`.

    Encoding the body is also the check that `data` is plain JSON (no NaN/Infinity, keys JSON can
    write, as `validate.check_json`): InvalidRecord naming `what` otherwise.
    """
    try:
        if _NAMED in data:
            body = {**data, _NAMED: None}  # the key keeps its place; its value is the row's
            named: str | None = json.dumps(data[_NAMED], allow_nan=False)
        else:
            body, named = data, None
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidRecord(f"{what} is not storable as JSON: {exc}") from exc
    return hashlib.sha256(canonical.encode()).hexdigest(), body, named


def estimate_data(body: dict[str, Any], revision_json: str | None) -> dict[str, Any]:
    """The estimate as written: `body` with the revision it names put back."""
    if revision_json is None:
        return body
    return {**body, _NAMED: json.loads(revision_json)}


def insert_estimate(conn: Connection, revision_id: int, version: str, data: dict[str, Any], now: datetime) -> None:
    """One estimate row for `revision_id`; its body is stored unless an equal one already is.
    Raises InvalidRecord when `data` is not plain JSON."""
    digest, body, named = body_of(data, f"estimate ({version})")
    conn.execute(_INSERT_BODY(conn), {"sha256": digest, "data": body, "stored_at": now})
    conn.execute(
        _INSERT_ROW(conn),
        {"revision_id": revision_id, "estimator_version": version, "body_sha256": digest, "revision_json": named,
         "created_at": now},
    )


def drop_unused_bodies(conn: Connection, digests: set[str]) -> None:
    """Delete those of `digests` no estimate points at any more (after estimates were replaced)."""
    if digests:
        used = sa.select(ESTIMATES.c.id).where(ESTIMATES.c.body_sha256 == ESTIMATE_BODIES.c.sha256)
        conn.execute(sa.delete(ESTIMATE_BODIES).where(ESTIMATE_BODIES.c.sha256.in_(sorted(digests)), ~used.exists()))


def joined() -> sa.Join:
    """`estimates` joined with their bodies (select `ESTIMATE_BODIES.c.data` and `ESTIMATES.c.revision_json`)."""
    return ESTIMATES.join(ESTIMATE_BODIES, ESTIMATE_BODIES.c.sha256 == ESTIMATES.c.body_sha256)
