"""Changes in the file listing: pickle files, custom code files, exports and other files.

Tracked config/tokenizer/template/index files and safetensors shards have their own differs and
are skipped here; README.md is the card's.
"""

from __future__ import annotations

import posixpath
from typing import Callable

from hubwatch.domain.records import ChangeRecord, Direction, FileRecord, Kind, Severity
from hubwatch.domain.snapshot import Snapshot, is_tracked

from .changes import UPDATE, HAZARD, make_change
from .text import diff_text, line_counts

__all__ = ["PICKLE_SUFFIXES", "diff_files", "is_pickle"]

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")
EXPORT_SUFFIXES = (".gguf", ".onnx", ".onnx_data", ".mlpackage", ".tflite")
TOKENIZER_FILES = ("tokenizer.model", "spiece.model", "vocab.json", "merges.txt", "vocab.txt", "qwen.tiktoken")


def is_pickle(path: str) -> bool:
    return path.lower().endswith(PICKLE_SUFFIXES)


def _is_export(path: str) -> bool:
    return path.lower().endswith(EXPORT_SUFFIXES)


def _is_tok(path: str) -> bool:
    return posixpath.basename(path) in TOKENIZER_FILES


def _export_label(summary: str) -> str:
    return f"export {summary}"


def _same_label(summary: str) -> str:
    return summary


def _version(record: FileRecord) -> tuple[object, ...]:
    return (record.lfs_sha256 or record.blob_id or record.content_sha256, record.size)


def _names(paths: list[str]) -> str:
    return paths[0] if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1} more files"


def _group(records: list[ChangeRecord], kind: Kind, severity: Severity, direction: Direction, paths: list[str],
           verb: str, label: Callable[[str], str] = _same_label) -> None:  # fmt: skip
    if paths:
        marks: dict[str, list[str]] = {}
        if kind is Kind.PICKLE:  # the one file-listing hazard: a pickle present; cleared when removed
            marks = {"hazards" if direction is HAZARD else "clears": [f"pickle:{p}" for p in paths]}
        records.append(make_change(
            kind, severity, file=paths[0] if len(paths) == 1 else posixpath.commonpath(paths) or ".",
            key=None, old=None if verb == "added" else paths, new=None if verb == "removed" else paths,
            summary=label(f"{_names(paths)} {verb}"), direction=direction, files=paths, **marks,
        ))  # fmt: skip


def _code_records(old: Snapshot, new: Snapshot, added: list[str], removed: list[str], changed: list[str]) -> list[ChangeRecord]:
    records: list[ChangeRecord] = []
    for path in added:
        text = new.text(path)
        records.append(make_change(
            Kind.CUSTOM_CODE, Severity.HIGH, file=path, key=None, old=None, new=None, direction=HAZARD,
            summary=f"custom code added: {path}", text_diff=diff_text("", text, new_name=f"new/{path}"),
            hazards=[f"code:{path}"],
        ))  # fmt: skip
    for path in changed:
        a, b = old.text(path), new.text(path)
        plus, minus = line_counts(a, b)
        records.append(make_change(
            Kind.CUSTOM_CODE, Severity.MEDIUM, file=path, key=None, old=None, new=None, direction=UPDATE,
            summary=f"custom code changed: {path} (+{plus}/-{minus} lines)",
            text_diff=diff_text(a, b, old_name=f"old/{path}", new_name=f"new/{path}"),
        ))  # fmt: skip
    for path in removed:
        records.append(make_change(
            Kind.CUSTOM_CODE, Severity.LOW, file=path, key=None, old=None, new=None, direction=UPDATE,
            summary=f"custom code removed: {path}", clears=[f"code:{path}"],
        ))  # fmt: skip
    return records


def diff_files(old: Snapshot, new: Snapshot) -> list[ChangeRecord]:
    """Files added, removed or replaced, by what they mean (pickle, code, export, other)."""
    added = sorted(set(new.files) - set(old.files))
    removed = sorted(set(old.files) - set(new.files))
    changed = sorted(p for p in set(old.files) & set(new.files) if _version(old.files[p]) != _version(new.files[p]))
    code_changed = [
        p for p in changed if p.endswith(".py") and (old.text(p) != new.text(p) or old.text(p) is None)
    ]  # a new blob counts even when the contents were not fetched
    records = _code_records(
        old, new, [p for p in added if p.endswith(".py")], [p for p in removed if p.endswith(".py")], code_changed
    )
    def pick(paths: list[str], test: Callable[[str], bool]) -> list[str]:
        return [p for p in paths if test(p)]

    def other(path: str) -> bool:
        return not (is_tracked(path) or is_pickle(path) or _is_export(path) or path.endswith(".safetensors") or _is_tok(path))

    _group(records, Kind.PICKLE, Severity.HIGH, HAZARD, pick(added, is_pickle), "added")
    _group(records, Kind.PICKLE, Severity.HIGH, HAZARD, pick(changed, is_pickle), "replaced (new content)")
    _group(records, Kind.PICKLE, Severity.LOW, UPDATE, pick(removed, is_pickle), "removed")
    _group(records, Kind.FILES, Severity.LOW, UPDATE, pick(added, _is_export), "added", _export_label)
    _group(records, Kind.FILES, Severity.LOW, UPDATE, pick(removed, _is_export), "removed", _export_label)
    _group(records, Kind.TOKENIZER, Severity.MEDIUM, UPDATE, pick(changed, _is_tok), "replaced (new content)")
    _group(records, Kind.TOKENIZER, Severity.MEDIUM, UPDATE, pick(removed, _is_tok), "removed")
    _group(records, Kind.FILES, Severity.INFO, UPDATE, pick(added, other) + pick(added, _is_tok), "added")
    _group(records, Kind.FILES, Severity.INFO, UPDATE, pick(removed, other), "removed")
    return records
