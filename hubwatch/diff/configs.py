"""Semantic diff of JSON config files (config.json, generation_config.json, processor configs).

Also the shared builder that turns key changes of any JSON file into ChangeRecords, and the
one-record-per-file summaries used when a whole file appears or disappears.
"""

from __future__ import annotations

from typing import Any

from hubwatch.domain.records import ChangeRecord, Kind, Severity

from .changes import UPDATE, HAZARD, make_change, show
from .classify import (
    DEFAULT_SEVERITY, ROUTING_OR_GENERATION_KEYS, FileRole, classify_key, holds_expert_count, key_hazards,
    severity_for,
)  # fmt: skip
from .jsondiff import MISSING, JsonDoc, KeyChange, key_changes, lookup, parse_json

__all__ = ["MAX_DIFFED_VALUES", "diff_json_file", "key_records", "read_pair", "unreadable_records"]

# Files diffed key by key (deepdiff: ~40 µs a value) hold at most this many values; real ones hold
# well under it (an ImageNet-21k id2label ≈ 44,000; 32,768 visual tokens in a tokenizer_config
# ≈ 230,000). tokenizer.json is summarised, not diffed: no cap.
MAX_DIFFED_VALUES = 1_000_000

_REMOVED_FILE: dict[str, tuple[Kind, Severity]] = {
    "config": (Kind.CONFIG, Severity.HIGH),
    "generation": (Kind.GENERATION_DEFAULTS, Severity.LOW),
    "tokenizer": (Kind.TOKENIZER, Severity.MEDIUM),
    "processor": (Kind.CONFIG, Severity.MEDIUM),
}


def _summary(kind: Kind, change: KeyChange) -> str:
    key = change.key or "(document)"
    if kind is Kind.CUSTOM_CODE:
        verb = {"added": "custom code added", "changed": "custom code changed", "removed": "custom code removed"}
        target = change.new if change.op != "removed" else change.old
        return f"{verb[change.op]} ({key} → {show(target)})"
    if change.op == "added":
        return f"{key} added: {show(change.new)}"
    if change.op == "removed":
        return f"{key} removed (was {show(change.old)})"
    return f"{key} {show(change.old)} → {show(change.new)}"


def _plain(value: Any) -> Any:
    return None if value is MISSING else value


def _renames(changes: list[KeyChange]) -> tuple[list[tuple[KeyChange, KeyChange]], list[KeyChange]]:
    """Pairs (removed, added) under one parent holding the same distinctive value."""
    removed = [c for c in changes if c.op == "removed"]
    added = [c for c in changes if c.op == "added"]
    pairs: list[tuple[KeyChange, KeyChange]] = []
    used: set[int] = set()
    for r in removed:
        distinctive = isinstance(r.old, (int, float)) and not isinstance(r.old, bool) and abs(r.old) > 1
        if not distinctive:
            continue
        for i, a in enumerate(added):
            if i not in used and a.path[:-1] == r.path[:-1] and a.new == r.old and type(a.new) is type(r.old):
                pairs.append((r, a))
                used.add(i)
                break
    paired = {id(c) for pair in pairs for c in pair}
    return pairs, [c for c in changes if id(c) not in paired]


def _kind(role: FileRole, path: tuple[str, ...], old: Any, new: Any) -> Kind:
    """classify_key, told whether the object holding the key counts experts on either side."""
    routed = bool(path) and path[-1] in ROUTING_OR_GENERATION_KEYS and (
        holds_expert_count(lookup(old, path[:-1])) or holds_expert_count(lookup(new, path[:-1]))
    )
    return classify_key(role, path, routed=routed)


def key_records(
    file: str, role: FileRole, changes: list[KeyChange], old: Any = None, new: Any = None
) -> list[ChangeRecord]:
    """One record per changed key (a renamed key with an unchanged value is one low record);
    `old` and `new` are the documents compared, read for the object around an ambiguous key."""
    pairs, rest = _renames(changes)
    records: list[ChangeRecord] = []
    for removed, added in pairs:
        kind = _kind(role, added.path, old, new)
        severity = Severity.LOW if kind is not Kind.METADATA else Severity.INFO
        records.append(
            make_change(
                kind, severity, file=file, key=added.key, old={removed.key: removed.old},
                new={added.key: added.new}, direction=UPDATE, renamed_from=removed.key,
                summary=f"{removed.key} renamed to {added.key} (value {show(added.new)} kept)",
            )
        )  # fmt: skip
    for change in rest:
        kind = _kind(role, change.path, old, new)
        hazards, clears = key_hazards(file, kind, change)
        records.append(
            make_change(
                kind, severity_for(kind, change), file=file, key=change.key or None,
                old=_plain(change.old), new=_plain(change.new), summary=_summary(kind, change),
                direction=HAZARD if hazards else UPDATE, op=change.op, **_marks(hazards, clears),
            )
        )  # fmt: skip
    return records


def _marks(hazards: list[str], clears: list[str]) -> dict[str, list[str]]:
    """The `detail` entries advise_match reads: the hazards a change brings and those it clears."""
    return {**({"hazards": hazards} if hazards else {}), **({"clears": clears} if clears else {})}


def _collapse_added(file: str, records: list[ChangeRecord]) -> list[ChangeRecord]:
    """A file that appears: one record per kind, capped at low (custom code keeps its severity)."""
    by_kind: dict[Kind, list[ChangeRecord]] = {}
    for record in records:
        by_kind.setdefault(record.kind, []).append(record)
    out: list[ChangeRecord] = []
    for kind, group in by_kind.items():
        keys = [r.detail["key"] for r in group]
        shown = ", ".join(f"{r.detail['key']}={show(r.detail['new'])}" for r in group[:4])
        more = f" (+{len(group) - 4} more)" if len(group) > 4 else ""
        severity = DEFAULT_SEVERITY[kind] if kind is Kind.CUSTOM_CODE else min(
            (DEFAULT_SEVERITY[kind], Severity.LOW), key=lambda s: s.rank
        )
        summary = group[0].summary if kind is Kind.CUSTOM_CODE and len(group) == 1 else (
            f"{file} added with {kind.value}: {shown}{more}"
        )
        hazards = [h for r in group for h in r.detail.get("hazards", [])]
        clears = [c for r in group for c in r.detail.get("clears", [])]
        out.append(
            make_change(
                kind, severity, file=file, key=keys[0] if len(keys) == 1 else None, old=None,
                new={r.detail["key"]: r.detail["new"] for r in group}, summary=summary,
                direction=HAZARD if hazards else UPDATE, file_added=True, **_marks(hazards, clears),
            )
        )  # fmt: skip
    return out


def unreadable_records(file: str, kind: Kind, old: JsonDoc | None, new: JsonDoc | None) -> list[ChangeRecord]:
    """Records for files that are not valid JSON (a finding, never a crash)."""
    if new is not None and not new.ok and (old is None or old.ok):
        return [
            make_change(
                kind, Severity.HIGH, file=file, key=None, old=None, new=None, direction=HAZARD,
                summary=f"{file} is not valid JSON ({new.error})", error=new.error, hazards=[f"invalid_json:{file}"],
            )
        ]  # fmt: skip
    if old is not None and not old.ok and new is not None and new.ok:
        return [
            make_change(
                kind, Severity.MEDIUM, file=file, key=None, old=None, new=None, direction=UPDATE,
                summary=f"{file} is valid JSON again", error=old.error, clears=[f"invalid_json:{file}"],
            )
        ]  # fmt: skip
    return []


def removed_file_record(file: str, role: FileRole) -> ChangeRecord:
    kind, severity = _REMOVED_FILE[role]
    return make_change(
        kind, severity, file=file, key=None, old="present", new=None, direction=UPDATE,
        summary=f"{file} removed", file_removed=True, clears=[f"invalid_json:{file}", f"code:{file}:auto_map"],
    )  # fmt: skip


def diff_parsed(file: str, role: FileRole, old: Any, new: Any, *, added: bool) -> list[ChangeRecord]:
    """Records between two parsed documents of one file (`added`: the file is new)."""
    before = {} if added else old
    records = key_records(file, role, key_changes(before, new), before, new)
    return _collapse_added(file, records) if added else records


def read_pair(
    file: str, role: FileRole, old_raw: bytes | None, new_raw: bytes | None
) -> tuple[JsonDoc | None, JsonDoc] | list[ChangeRecord]:
    """Both sides of a JSON file parsed, the new one readable; or, when the file is gone or does not
    parse, the records that say so (the whole diff of the file)."""
    cap = None if file == "tokenizer.json" else MAX_DIFFED_VALUES
    old, new = parse_json(old_raw, max_values=cap), parse_json(new_raw, max_values=cap)
    if new is None:
        return [] if old is None else [removed_file_record(file, role)]
    bad = unreadable_records(file, _REMOVED_FILE[role][0], old, new)
    if bad or not new.ok:
        return bad
    return old, new


def diff_json_file(file: str, role: FileRole, old_raw: bytes | None, new_raw: bytes | None) -> list[ChangeRecord]:
    """The semantic diff of one JSON file between two revisions."""
    pair = read_pair(file, role, old_raw, new_raw)
    if isinstance(pair, list):
        return pair
    old, new = pair
    if old is None or not old.ok:
        return diff_parsed(file, role, None, new.value, added=old is None)
    return diff_parsed(file, role, old.value, new.value, added=False)
