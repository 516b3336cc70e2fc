"""A dataset's parquet conversion as hubwatch keeps it: the hub's converter branch
(`refs/convert/parquet`) per config and split, its shards (paths, sizes, LFS oids) and their bytes.

The tracker reads the branch's tree for the head it polls (`tracker.hub_parquet`) and keeps what it
says in the revision's snapshot as one derived file, `CONVERSION_PATH`, whose content is the JSON
`conversion_document` writes: stored by content like any tracked file, read back by
`read_conversion` (within `remote_data`'s limits, since what it lists came from the hub). No
repo path begins with "/", so the derived file never meets one of the repo's own.

Where the card (or `dataset_infos.json`) states no splits for a config, `with_converted` takes them
from the conversion: which splits the viewer and `load_dataset` see, their shards and parquet bytes.

The converter's layout is `<config>/<split>/NNNN.parquet`, and `<config>/partial-<split>/…` where
it converted only the first part of a split (the viewer's size limit); an entry laid out otherwise
is counted as `skipped`, never guessed at.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from hubwatch.domain.files import FileRecord
from hubwatch.domain.remote_data import load_remote_json
from hubwatch.domain.snapshot import Snapshot

from .dataset_meta import ConfigMeta, DatasetMeta, SplitMeta, default_config

__all__ = [
    "CONVERSION_PATH",
    "MAX_SHARDS",
    "PARQUET_REF",
    "Conversion",
    "ConvertedSplit",
    "Shard",
    "conversion_document",
    "is_conversion_path",
    "read_conversion",
    "with_conversion",
    "with_converted",
]

PARQUET_REF = "refs/convert/parquet"
CONVERSION_PATH = "/" + PARQUET_REF  # the derived file's path in a snapshot (never a repo path)
MAX_SHARDS = 10_000  # shards kept of one conversion; the rest are counted as skipped
_PARTIAL = "partial-"
_FORMAT = 1  # the document's own version


@dataclass(frozen=True)
class Shard:
    path: str
    size: int | None
    oid: str | None  # the LFS sha256 (a re-upload with other content changes it)


@dataclass(frozen=True)
class ConvertedSplit:
    """One split as converted: its shards; `partial` when the converter took only its first part."""

    name: str
    shards: tuple[Shard, ...]
    partial: bool = False

    @property
    def bytes(self) -> int | None:
        """The parquet bytes of every shard (None when a size is unknown)."""
        sizes = [s.size for s in self.shards]
        return None if None in sizes else sum(s or 0 for s in sizes)


@dataclass(frozen=True)
class Conversion:
    """What the conversion branch said when the head it belongs to was polled: `commit` the
    converter's commit (the branch's head then), `date` its date (RFC 3339), configs → splits."""

    commit: str
    date: str | None
    configs: dict[str, dict[str, ConvertedSplit]]
    skipped: int = 0

    @property
    def label(self) -> str:
        """How records and pages name it: `refs/convert/parquet@<commit>`."""
        return f"{PARQUET_REF}@{self.commit[:12]}"


def is_conversion_path(path: str) -> bool:
    return path == CONVERSION_PATH


def _layout(path: str) -> tuple[str, str, bool] | None:
    """(config, split, partial) of a converter shard path, or None when laid out otherwise."""
    parts = path.split("/")
    if len(parts) != 3 or not parts[2].endswith(".parquet") or not all(parts):
        return None
    config, split = parts[0], parts[1]
    partial = split.startswith(_PARTIAL) and len(split) > len(_PARTIAL)
    return config, split[len(_PARTIAL):] if partial else split, partial


def conversion_document(commit: str, date: str | None, entries: Iterable[tuple[str, int | None, str | None]]) -> bytes:
    """The stored form of a conversion from its tree entries (path, size, LFS sha256), sorted and
    canonical, so the same branch state always stores the same bytes."""
    configs: dict[str, dict[str, dict[str, Any]]] = {}
    skipped = kept = 0
    for path, size, oid in sorted(entries, key=lambda e: e[0]):
        where = _layout(path)
        if where is None or kept >= MAX_SHARDS:
            skipped += int(where is not None or path.endswith(".parquet"))  # .gitattributes and the like are no shards
            continue
        config, split, partial = where
        entry = configs.setdefault(config, {}).setdefault(split, {"partial": False, "shards": []})
        entry["partial"] = entry["partial"] or partial
        entry["shards"].append({"path": path, "size": size, "oid": oid})
        kept += 1
    doc = {"format": _FORMAT, "ref": PARQUET_REF, "commit": commit, "date": date, "configs": configs,
           "skipped": skipped}  # fmt: skip
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def with_conversion(snapshot: Snapshot, document: bytes) -> Snapshot:
    """`snapshot` with the conversion kept as its derived file (a listed path of the hub's that
    happens to be the same is replaced: it cannot be one, see the module's first lines)."""
    files = dict(snapshot.files)
    files[CONVERSION_PATH] = FileRecord(CONVERSION_PATH, len(document), None, None)
    contents = dict(snapshot.contents)
    contents[CONVERSION_PATH] = document
    return Snapshot(snapshot.sha, files, contents, snapshot.safetensors)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _split(name: str, value: Any) -> ConvertedSplit | None:
    if not isinstance(value, dict) or not isinstance(value.get("shards"), list):
        return None
    shards = tuple(
        Shard(s["path"], _int(s.get("size")), s.get("oid") if isinstance(s.get("oid"), str) else None)
        for s in value["shards"] if isinstance(s, dict) and isinstance(s.get("path"), str)
    )  # fmt: skip
    return ConvertedSplit(name, shards, value.get("partial") is True)


def read_conversion(snapshot: Snapshot) -> Conversion | None:
    """The conversion kept in `snapshot`, or None when it has none (or what it keeps is unreadable)."""
    raw = snapshot.contents.get(CONVERSION_PATH)
    if raw is None:
        return None
    try:
        doc = load_remote_json(raw)
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("commit"), str) or not isinstance(doc.get("configs"), dict):
        return None
    configs: dict[str, dict[str, ConvertedSplit]] = {}
    for config, splits in doc["configs"].items():
        for split, value in splits.items() if isinstance(splits, dict) else ():
            if (parsed := _split(str(split), value)) is not None:
                configs.setdefault(str(config), {})[str(split)] = parsed
    date = doc.get("date")
    return Conversion(doc["commit"], date if isinstance(date, str) else None, configs, _int(doc.get("skipped")) or 0)


def with_converted(meta: DatasetMeta, conversion: Conversion | None) -> DatasetMeta:
    """`meta` with every config whose splits it does not state taken from `conversion` (its splits:
    shards and parquet bytes; a config only the conversion names is added), marked `source =
    PARQUET_REF`. The card's and `dataset_infos.json`'s statements always win."""
    if conversion is None:
        return meta
    configs = dict(meta.configs)
    filled = False
    for name, splits in sorted(conversion.configs.items()):
        known = configs.get(name)
        if known is not None and known.splits:
            continue
        stated = {split: SplitMeta(None, None, c.bytes, len(c.shards)) for split, c in sorted(splits.items())}
        configs[name] = (ConfigMeta(name, splits=stated, source=PARQUET_REF) if known is None
                         else replace(known, splits=stated, source=PARQUET_REF))  # fmt: skip
        filled = True
    if not filled:
        return meta
    return replace(meta, configs=configs, default=meta.default or default_config(configs),
                   source=meta.source or PARQUET_REF, conversion=conversion.label)  # fmt: skip
