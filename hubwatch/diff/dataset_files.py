"""A dataset's data files, from the listing alone (paths, sizes, oids): shards added, removed or
re-uploaded with other content, the data format, the total size. No data file is ever opened.

A data file is one a config's `data_files` pattern matches, or one in a data format
(`DATA_FORMATS`, compressed or not) that is not the repo's own metadata. Pickles are not data
files here: `files.diff_files` gives them their hazard.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable, Mapping
from typing import Any

from hubwatch.domain.records import ChangeRecord, FileRecord, Kind, Severity

from .changes import counted, make_change
from .dataset_meta import CARD_FILE, INFOS_FILE, ConfigMeta

__all__ = ["DATA_FORMATS", "data_files_of", "diff_data_files", "file_format"]

DATA_FORMATS: dict[str, str] = {
    ".parquet": "parquet", ".arrow": "arrow", ".csv": "csv", ".tsv": "csv", ".json": "json", ".jsonl": "json",
    ".ndjson": "json", ".txt": "text", ".tar": "webdataset", ".zip": "zip", ".h5": "hdf5", ".hdf5": "hdf5",
    ".npy": "numpy", ".npz": "numpy", ".avro": "avro", ".lance": "lance", ".xml": "xml", ".sql": "sql",
    ".jpg": "imagefolder", ".jpeg": "imagefolder", ".png": "imagefolder", ".webp": "imagefolder",
    ".tif": "imagefolder", ".tiff": "imagefolder", ".bmp": "imagefolder", ".gif": "imagefolder",
    ".wav": "audiofolder", ".mp3": "audiofolder", ".flac": "audiofolder", ".ogg": "audiofolder",
    ".mp4": "videofolder", ".webm": "videofolder", ".pdf": "pdffolder",
}  # fmt: skip
_COMPRESSION = (".gz", ".bz2", ".xz", ".zst", ".lz4")
# Files of a dataset repo that describe it rather than hold its rows.
_NOT_DATA = frozenset({CARD_FILE.lower(), INFOS_FILE, "dataset_dict.json", "state.json", ".gitattributes",
                       "requirements.txt", "license", "license.txt", "license.md", "citation.cff"})  # fmt: skip


def file_format(path: str) -> str | None:
    """The data format a file's name says (`train.jsonl.gz` → json), or None."""
    name = posixpath.basename(path).lower()
    for suffix in _COMPRESSION:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return DATA_FORMATS.get(posixpath.splitext(name)[1])


def _patterns(configs: Mapping[str, ConfigMeta]) -> list[str]:
    return [p for c in configs.values() for ps in (c.data_files or {}).values() for p in ps]


def data_files_of(files: Iterable[str], configs: Mapping[str, ConfigMeta]) -> set[str]:
    """The data files among `files` (see the module's first lines)."""
    patterns = _patterns(configs)
    out: set[str] = set()
    for path in files:
        name = posixpath.basename(path).lower()
        if name in _NOT_DATA or name.endswith(".py") or name.startswith(".") or path.startswith((".", "/")):
            continue
        if file_format(path) is not None or any(fnmatch.fnmatchcase(path, p) for p in patterns):
            out.add(path)
    return out


def _version(record: FileRecord) -> tuple[object, ...]:
    return (record.lfs_sha256 or record.blob_id or record.content_sha256, record.size)


def _size(files: Mapping[str, FileRecord], paths: Iterable[str]) -> int:
    return sum(files[p].size or 0 for p in paths)


def _names(paths: list[str]) -> str:
    return f"data file {paths[0]}" if len(paths) == 1 else f"data files {paths[0]} and {len(paths) - 1} more"


def _common(paths: list[str]) -> str:
    return paths[0] if len(paths) == 1 else posixpath.commonpath(paths) or "."


def _formats(paths: Iterable[str]) -> list[str]:
    return sorted({f for p in paths if (f := file_format(p)) is not None})


def diff_data_files(
    old: Mapping[str, FileRecord], old_data: set[str], new: Mapping[str, FileRecord], new_data: set[str],
    *, described_change: bool,
) -> list[ChangeRecord]:  # fmt: skip
    """Data-file records between two listings; `old_data`/`new_data` are their data files.

    `described_change`: the metadata's schema or splits changed in the same diff. A re-upload
    without one is silent (the card still promises what it did): high rather than medium.
    """
    added = sorted(new_data - old_data)
    removed = sorted(old_data - new_data)
    replaced = sorted(p for p in old_data & new_data if _version(old[p]) != _version(new[p]))
    totals = {"files": {"old": len(old_data), "new": len(new_data)},
              "bytes": {"old": _size(old, old_data), "new": _size(new, new_data)}}  # fmt: skip
    records: list[ChangeRecord] = []

    def group(paths: list[str], severity: Severity, op: str, verb: str, **extra: Any) -> None:
        if paths:
            records.append(make_change(
                Kind.DATA_FILES, severity, file=_common(paths), key=None,
                old=None if op == "added" else paths, new=None if op == "removed" else paths,
                summary=f"{_names(paths)} {verb}", files=paths, op=op, totals=totals, **extra,
            ))  # fmt: skip

    group(added, Severity.LOW, "added", "added")
    group(removed, Severity.MEDIUM, "removed", "removed")
    silent = not described_change
    group(replaced, Severity.HIGH if silent else Severity.MEDIUM, "replaced",
          "re-uploaded with other content" + (" while the card describes the same data" if silent else ""),
          silent=silent, oids={p: {"old": old[p].lfs_sha256 or old[p].blob_id, "new": new[p].lfs_sha256 or new[p].blob_id}
                               for p in replaced})  # fmt: skip
    before, after = _formats(old_data), _formats(new_data)
    if before and after and before != after:
        records.append(make_change(
            Kind.DATA_FILES, Severity.MEDIUM, file=".", key="format", old=before, new=after,
            summary=f"data format {', '.join(before)} → {', '.join(after)}", op="format", totals=totals,
        ))  # fmt: skip
    a, b = totals["bytes"]["old"], totals["bytes"]["new"]
    if a != b and old_data and new_data:
        records.append(make_change(
            Kind.DATA_FILES, Severity.LOW, file=".", key="total_size", old=a, new=b,
            summary=f"data files total {a:,} → {b:,} bytes ({counted(len(new_data), 'file')})", op="total_size",
            totals=totals,
        ))  # fmt: skip
    return records
