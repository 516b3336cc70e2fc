"""Revert matching for advisories: does a new change undo a change an earlier advisory recorded?"""

from __future__ import annotations

import json
from typing import Any

from hubwatch.domain.advisory_keys import detail_files as _files
from hubwatch.domain.records import ChangeRecord, Direction

__all__ = [
    "change_keys", "cleared_hazards", "closes", "direction_of", "file_key", "is_fixed", "jsonable", "mark_undone",
    "undoes",
]


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


def change_keys(change: ChangeRecord) -> frozenset[tuple[str, str | None]]:
    """The (file, key) pairs of the entries `change` may undo: every entry it undoes shares one
    with it (`hubwatch.domain.advisory_keys.entry_keys`). Without a key, its files; with one, its
    file under that key, the key it was renamed from, and None (entries whose key is not text)."""
    file, key = file_key(change)
    if key is None:
        return frozenset((f, None) for f in _files({**change.detail, "file": file}))
    back = change.detail.get("renamed_from")
    return frozenset([(file, None)] + [(file, k) for k in (key, back) if isinstance(k, str)])


def _clears(token: str, hazard: str) -> bool:
    """Whether a change's clear token removes one hazard key (docs/advisories.md, *Closing*)."""
    if token.startswith("license:") and hazard.startswith("license:"):
        try:  # a licence hazard raised from rank r closes when the licence is back at rank r or lower
            return int(token.partition(":")[2]) <= int(hazard.partition(":")[2])
        except ValueError:
            return False
    return hazard == token or hazard.startswith(token + ".")  # `code:config.json:auto_map` clears its entries


def cleared_hazards(change: ChangeRecord, entry: dict[str, Any]) -> list[str]:
    """The hazard keys of an advisory entry, not cleared yet, that `change` clears."""
    detail = entry.get("detail", {})
    hazards = detail.get("hazards") if isinstance(detail, dict) else None
    tokens = change.detail.get("clears")
    if not isinstance(hazards, list) or not isinstance(tokens, list):
        return []
    done = set(entry.get("cleared") or ())
    return [h for h in hazards if isinstance(h, str) and h not in done and any(_clears(str(t), h) for t in tokens)]


def _remaining(entry: dict[str, Any]) -> set[str]:
    hazards = entry.get("detail", {}).get("hazards") or []
    return {str(h) for h in hazards} - set(entry.get("cleared") or ())


def closes(change: ChangeRecord, entry: dict[str, Any]) -> bool:
    """True when `change` removes (some of) what an open hazard entry carries.

    An entry with hazard keys (`detail.hazards`, written since the two meanings) is closed by the
    changes that clear them, or by its key's value put back; one without (an older record) by the
    revert rules of `undoes`.
    """
    if entry.get("reverted_by") or change.path == "estimate" or entry.get("path") == "estimate":
        return False
    if isinstance(entry.get("detail", {}).get("hazards"), list):
        keyed = entry.get("detail", {}).get("key") is not None and undoes(change, entry)
        return keyed or bool(cleared_hazards(change, entry))
    return undoes(change, entry)


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
    """Mark what `change` removes from a hazard record: cleared keys, and `reverted_by` once the
    entry carries nothing any more. True when anything was marked."""
    hit = False
    for entry in ds.get("changes", []):
        if not closes(change, entry):
            continue
        hit = True
        if isinstance(entry.get("detail", {}).get("hazards"), list) and not (
            entry["detail"].get("key") is not None and undoes(change, entry)
        ):
            entry["cleared"] = sorted(set(entry.get("cleared") or ()) | set(cleared_hazards(change, entry)))
            if _remaining(entry):
                continue  # part of it removed: the record stays open
        entry["reverted_by"] = sha
    return hit
