"""diff_snapshots: every file-kind differ run on two revisions, merged into one ordered list."""

from __future__ import annotations

from hubwatch.domain.records import ChangeRecord
from hubwatch.domain.snapshot import Snapshot

from .card import diff_card
from .changes import as_initial
from .configs import diff_json_file
from .files import diff_files
from .moves import pair_moves
from hubwatch.domain.parsed_json import parse_once
from .sandbox import RenderLimits
from .templates import diff_templates
from .tokenizer import diff_added_tokens_json, diff_tokenizer_config, diff_tokenizer_json
from .weights import diff_weights

__all__ = ["diff_snapshots", "order"]

_JSON_ROLES = {
    "config.json": "config",
    "generation_config.json": "generation",
    "preprocessor_config.json": "processor",
    "processor_config.json": "processor",
}


def _content_records(old: Snapshot, new: Snapshot) -> list[ChangeRecord]:
    records: list[ChangeRecord] = []
    for file, role in _JSON_ROLES.items():
        a, b = old.contents.get(file), new.contents.get(file)
        if a != b:
            records += diff_json_file(file, role, a, b)
    for file in ("tokenizer_config.json", "special_tokens_map.json"):
        a, b = old.contents.get(file), new.contents.get(file)
        if a != b:
            records += diff_tokenizer_config(file, a, b)
    for file, differ in (("added_tokens.json", diff_added_tokens_json), ("tokenizer.json", diff_tokenizer_json)):
        a, b = old.contents.get(file), new.contents.get(file)
        if a != b:
            records += differ(file, a, b)
    return records


def order(record: ChangeRecord) -> tuple[int, str, str, str]:
    """Most severe first, then by kind, path and summary: the order of every diff's records."""
    return (-record.severity.rank, record.kind.value, record.path, record.summary)


def diff_snapshots(old: Snapshot | None, new: Snapshot, *, limits: RenderLimits | None = None) -> list[ChangeRecord]:
    """What changed from `old` to `new`, classified (most severe first; [] when nothing did).

    `old=None` means `new` is the repo's first known revision: the result then describes its
    initial state (what an empty repo → `new` diff finds), every record at info severity with
    `detail["initial"] = True`, so nothing about a first revision is alarming by itself.
    Each JSON file is parsed once for the whole diff (`parsed.parse_once`).
    """
    base = old if old is not None else Snapshot(sha="", files={})
    with parse_once():
        records = pair_moves(_content_records(base, new), new)
        records += diff_templates(base, new, limits)
        records += diff_weights(base, new)
    records += diff_files(base, new)
    records += diff_card(base, new)
    if old is None:
        records = as_initial(records)
    return sorted(records, key=order)
