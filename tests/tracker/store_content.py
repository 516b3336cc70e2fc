"""What a store holds, as comparable values: two stores that tracked the same history must be equal.

Row ids, storage times and the advisories' own publication times (wall clock of the poll that
made them) are left out; everything upstream-derived is kept: repos and heads, revisions,
files, changes, estimates, advisories (the OSV document), advisory events and history rewrites.
Duplicates show: every table is a sorted list, not a set.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any

import sqlalchemy as sa

__all__ = ["duplicates", "store_content"]

_QUERIES = {
    "repos": "SELECT org || '/' || name, state, head_sha, failures FROM repos",
    "revisions": "SELECT r.org || '/' || r.name, v.sha, v.parent_sha, v.date, v.title, v.message"
                 " FROM revisions v JOIN repos r ON r.id = v.repo_id",
    "files": "SELECT v.sha, f.path, f.size, f.blob_id, f.lfs_sha256 FROM file_versions f"
             " JOIN revisions v ON v.id = f.revision_id",
    "changes": "SELECT v.sha, c.kind, c.severity, c.path, c.summary, c.detail, c.direction FROM changes c"
               " JOIN revisions v ON v.id = c.revision_id",
    # the body shared by equal estimates, and the revision each names (storage.estimates)
    "estimates": "SELECT v.sha, e.estimator_version, b.data, e.revision_json FROM estimates e"
                 " JOIN revisions v ON v.id = e.revision_id JOIN estimate_bodies b ON b.sha256 = e.body_sha256",
    "advisories": "SELECT a.id, v.sha, a.osv FROM advisories a JOIN revisions v ON v.id = a.revision_id",
    "advisory_events": "SELECT advisory_id, event, value, range_repo FROM advisory_events",
    "history_rewrites": "SELECT * FROM history_rewrites",
    "history_restores": "SELECT * FROM history_restores",
}
_DATETIME = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d")
_TIMES = {"published", "modified", "stored_at", "created_at", "detected_at", "recorded_at", "id"}


def _plain(value: Any) -> Any:
    if isinstance(value, str) and _DATETIME.match(value):  # SQLite hands back its stored text
        value = datetime.fromisoformat(value)
    if isinstance(value, datetime) and value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    if isinstance(value, str) and value[:1] in "{[":
        try:
            value = json.loads(value)
        except ValueError:
            return value
    if isinstance(value, dict):
        return json.dumps({k: _plain(v) for k, v in value.items() if k not in _TIMES}, sort_keys=True, default=str)
    if isinstance(value, list):
        return json.dumps([_plain(v) for v in value], sort_keys=True, default=str)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def store_content(engine: sa.Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every table above as a sorted list of rows (times of hubwatch's own making left out)."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    with engine.connect() as conn:
        for table, query in _QUERIES.items():
            result = conn.execute(sa.text(query))
            keep = [i for i, name in enumerate(result.keys()) if name not in _TIMES and name != "repo_id"]
            rows = [tuple(_plain(row[i]) for i in keep) for row in result]
            out[table] = sorted(rows, key=repr)
    return out


def duplicates(content: dict[str, list[tuple[Any, ...]]]) -> dict[str, int]:
    """Rows present more than once, per table (0 everywhere in a store without duplicates)."""
    return {t: len(rows) - len(set(rows)) for t, rows in content.items()}
