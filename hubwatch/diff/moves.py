"""Moves: a key that leaves config.json for generation_config.json is one change, not two.

transformers reads generation settings from generation_config.json, so a key removed from
config.json that generation_config.json holds with the same value after the commit changes no
behaviour: it is one low update, "moved", in place of "removed" (and of "added" when the commit
also added it there). The chat template's move between files is found by templates.py, which
compares the rendered prompts.
"""

from __future__ import annotations

from hubwatch.domain.records import ChangeRecord, Kind, Severity
from hubwatch.domain.snapshot import Snapshot

from .changes import UPDATE, make_change, show
from .jsondiff import MISSING, lookup, parse_json

__all__ = ["pair_moves"]

_SOURCE, _TARGET = "config.json", "generation_config.json"


def _target_doc(snapshot: Snapshot) -> object:
    doc = parse_json(snapshot.contents.get(_TARGET))
    return doc.value if doc is not None and doc.ok else None


def pair_moves(records: list[ChangeRecord], new: Snapshot) -> list[ChangeRecord]:
    """`records` with each config.json → generation_config.json move made one "moved" record."""
    target = _target_doc(new)
    if not isinstance(target, dict):
        return records
    moved: dict[str, ChangeRecord] = {}
    arrived = {r.detail.get("key") for r in records if r.detail.get("file") == _TARGET and r.detail.get("op") == "added"}
    for record in records:
        detail = record.detail
        key = detail.get("key")
        if detail.get("file") != _SOURCE or detail.get("op") != "removed" or not isinstance(key, str):
            continue
        if record.kind not in (Kind.GENERATION_DEFAULTS, Kind.SPECIAL_TOKENS):
            continue
        value = lookup(target, tuple(key.split(".")))
        if value is MISSING or value != detail.get("old"):
            continue
        summary = (
            f"{key} moved from {_SOURCE} to {_TARGET} (value {show(value)} kept)" if key in arrived
            else f"{key} removed from {_SOURCE}, kept in {_TARGET} (value {show(value)})"
        )  # fmt: skip
        moved[key] = make_change(
            record.kind, Severity.LOW, file=_TARGET, key=key, old=detail.get("old"), new=value, summary=summary,
            direction=UPDATE, moved_from=_SOURCE, op="moved",
        )  # fmt: skip
    if not moved:
        return records
    out: list[ChangeRecord] = []
    for record in records:
        detail, key = record.detail, record.detail.get("key")
        if key in moved and detail.get("file") == _SOURCE and detail.get("op") == "removed":
            out.append(moved[str(key)])
        elif key in moved and detail.get("file") == _TARGET and detail.get("op") == "added":
            continue  # the same move, seen from the other file
        else:
            out.append(record)
    return out
