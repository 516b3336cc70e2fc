"""Revert matching for advisories: does a new change undo a change an earlier advisory recorded?"""

from __future__ import annotations

import json
from typing import Any

from hubwatch.domain.records import ChangeRecord, Direction

__all__ = ["direction_of", "file_key", "is_fixed", "jsonable", "mark_undone", "undoes"]


def jsonable(value: Any) -> Any:
    """A plain-JSON copy (tuples → lists, unknown objects → str) so records round-trip exactly."""
    return json.loads(json.dumps(value, default=str, sort_keys=True))


def file_key(change: ChangeRecord) -> tuple[str, str | None]:
    file, _, key = change.path.partition(":")
    detail = change.detail
    return str(detail.get("file") or file), (detail.get("key") if "key" in detail else (key or None))


def direction_of(osv: dict[str, Any]) -> Direction | None:
    """The direction a record written by hubwatch declares; None for a record of another shape."""
    ds = osv.get("database_specific")
    if not isinstance(ds, dict) or not isinstance(ds.get("changes"), list):
        return None
    try:
        return _direction(ds)
    except ValueError:
        return None


def _direction(entry: dict[str, Any]) -> Direction | None:
    try:
        return Direction.parse(entry.get("direction"))
    except ValueError:
        return None


def is_fixed(osv: dict[str, Any]) -> bool:
    return any("fixed" in ev for a in osv.get("affected", []) for r in a.get("ranges", []) for ev in r["events"])


def _files(detail: dict[str, Any]) -> frozenset[str]:
    files = detail.get("files")
    if isinstance(files, list) and files and all(isinstance(f, str) for f in files):
        return frozenset(files)
    file = detail.get("file")
    return frozenset([file]) if isinstance(file, str) and file else frozenset()


def undoes(change: ChangeRecord, entry: dict[str, Any]) -> bool:
    """True when `change` puts back what an earlier change (an advisory entry) had replaced.

    A key (`detail.key` set): same file and key, both real changes (old ≠ new), and the new
    value equals the earlier old value; or a key renamed back (`renamed_from` swapped, same
    file). A whole file (key None): a change in the opposite
    direction covering the same files (a pickle or code file removed again, a file valid again).
    Estimate moves are never matched: they follow the changes that caused them.
    """
    if change.path == "estimate" or entry.get("path") == "estimate":
        return False
    detail = entry.get("detail", {})
    file, key = file_key(change)
    if key is None:
        opposite = Direction.UPDATE if _direction(entry) is Direction.HAZARD else Direction.HAZARD
        theirs = _files(detail)
        return detail.get("key") is None and change.direction == opposite and bool(theirs) and (
            theirs <= _files({**change.detail, "file": file})
        )
    back = change.detail.get("renamed_from")
    if back is not None and detail.get("renamed_from") == key and back == detail.get("key"):
        return bool(file == detail.get("file"))
    if (file, key) != (detail.get("file"), detail.get("key")):
        return False
    if "new" not in change.detail or "old" not in detail or "new" not in detail:
        return False
    old, new = jsonable(change.detail.get("old")), jsonable(change.detail["new"])
    return bool(old != new and detail["old"] != detail["new"] and new == detail["old"])


def mark_undone(ds: dict[str, Any], change: ChangeRecord, sha: str) -> bool:
    hit = False
    for entry in ds.get("changes", []):
        if not entry.get("reverted_by") and undoes(change, entry):
            entry["reverted_by"] = sha
            hit = True
    return hit
