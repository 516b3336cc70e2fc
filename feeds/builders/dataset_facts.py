"""A dataset revision's own facts for its pages, in place of a model's estimate panel: its configs
(subsets) with their splits (rows, bytes) and features, its data files by format, its licence and
gating, all read from what the store kept of that revision (the card's YAML, `dataset_infos.json`,
the hub's parquet conversion where the card states no splits, the file listing) by the diff's own
parser: nothing is fetched, no loading script is run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hubwatch.diff.dataset_meta import ConfigMeta, dataset_meta
from hubwatch.diff.dataset_parquet import is_conversion_path, read_conversion, with_converted
from hubwatch.domain.records import FileRecord
from hubwatch.domain.snapshot import Snapshot

__all__ = ["DatasetFacts", "FileFormat", "dataset_facts"]

# File endings the hub's dataset viewer reads as data, and the format each names.
_FORMATS = {
    ".parquet": "parquet", ".arrow": "arrow", ".jsonl": "json", ".json": "json", ".jsonl.gz": "json",
    ".json.gz": "json", ".csv": "csv", ".tsv": "csv", ".csv.gz": "csv", ".txt": "text", ".tar": "webdataset",
    ".zip": "zip", ".mds": "mds",
}  # fmt: skip
_NOT_DATA = {"README.md", "dataset_infos.json", ".gitattributes"}


@dataclass(frozen=True)
class FileFormat:
    """The data files of one format: how many and their total size (None when a size is unknown)."""

    format: str
    count: int
    bytes: int | None


@dataclass(frozen=True)
class DatasetFacts:
    configs: tuple[ConfigMeta, ...]
    default: str | None
    source: str | None  # the file the features and splits were read from; None: neither states them
    formats: tuple[FileFormat, ...]
    license: str | None
    gated: str | None  # what the card says of access ("gated: manual access requests …"), or None
    card_error: str | None
    conversion: str | None = None  # `refs/convert/parquet@<commit>` when the conversion states splits
    # No conversion kept while a config (or the whole card) states no splits: the page says why they are missing.
    unconverted: bool = False

    @property
    def rows(self) -> int | None:
        """All rows of all configs' splits, where the metadata states every one."""
        counts = [s.rows for c in self.configs for s in c.splits.values()]
        return sum(r for r in counts if r is not None) if counts and None not in counts else None


def _format(path: str) -> str | None:
    if path.rsplit("/", 1)[-1] in _NOT_DATA:
        return None
    lower = path.lower()
    return next((fmt for end, fmt in sorted(_FORMATS.items(), key=lambda e: -len(e[0])) if lower.endswith(end)), None)


def _formats(files: Sequence[FileRecord]) -> tuple[FileFormat, ...]:
    found: dict[str, list[int | None]] = {}
    for record in files:
        fmt = None if is_conversion_path(record.path) else _format(record.path)
        if fmt is not None:
            found.setdefault(fmt, []).append(record.size)
    rows = [FileFormat(fmt, len(sizes), None if None in sizes else sum(s or 0 for s in sizes))
            for fmt, sizes in found.items()]  # fmt: skip
    return tuple(sorted(rows, key=lambda r: (-(r.bytes or 0), r.format)))


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()[:200]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return ", ".join(value)[:200]
    return None


def _gated(card: Mapping[str, Any]) -> str | None:
    """The card's access terms: `extra_gated_*` fields are shown only on a gated repo's form."""
    gated = [k for k in card if isinstance(k, str) and k.startswith("extra_gated_")]
    prompt = _text(card.get("extra_gated_prompt"))
    if not gated:
        return None
    return f"gated: access is asked for on the hub{' — ' + prompt if prompt else ''}"


def dataset_facts(sha: str, files: Sequence[FileRecord], contents: Mapping[str, bytes]) -> DatasetFacts:
    """The facts of one stored dataset revision (`store.revisions.snapshot_files`)."""
    snapshot = Snapshot(sha, {f.path: f for f in files}, contents)
    kept = read_conversion(snapshot)
    meta = with_converted(dataset_meta(snapshot), kept)
    card = meta.card or {}
    return DatasetFacts(
        configs=tuple(meta.configs.values()),
        default=meta.default,
        source=meta.source,
        formats=_formats(files),
        license=_text(card.get("license")),
        gated=_gated(card),
        card_error=meta.card_error,
        conversion=meta.conversion,
        unconverted=kept is None and (not meta.configs or any(not c.splits for c in meta.configs.values())),
    )
