"""A dataset's parquet conversion as hubwatch keeps it: the hub's converter branch
(`refs/convert/parquet`) per config and split, its shards (paths, sizes, LFS oids), their bytes and,
from the shards' parquet footers (`parquet_footer`), each split's rows and columns.

The tracker reads the branch's tree for the head it polls (`tracker.hub_parquet`) and keeps what it
says in the revision's snapshot as one derived file, `CONVERSION_PATH`, whose content is the JSON
`conversion_document` writes: stored by content like any tracked file, read back by
`read_conversion` (within `remote_data`'s limits, since what it lists came from the hub). No
repo path begins with "/", so the derived file never meets one of the repo's own.

Where the card (or `dataset_infos.json`) states no splits for a config, `with_converted` takes them
from the conversion: which splits the viewer and `load_dataset` see, their rows, shards and parquet
bytes, and the config's columns where neither states them.

The converter's layout is `<config>/<split>/NNNN.parquet`, and `<config>/partial-<split>/…` where
it converted only the first part of a split (the viewer's size limit); an entry laid out otherwise
is counted as `skipped`, never guessed at.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from hubwatch.domain.files import FileRecord
from hubwatch.domain.remote_data import load_remote_json
from hubwatch.domain.snapshot import Snapshot

from .dataset_meta import Column, ConfigMeta, DatasetMeta, SplitMeta, default_config
from .parquet_footer import Footer

__all__ = [
    "CONVERSION_PATH",
    "MAX_FOOTERS",
    "MAX_FOOTERS_PER_SPLIT",
    "MAX_SHARDS",
    "PARQUET_REF",
    "Conversion",
    "ConvertedSplit",
    "Shard",
    "conversion_document",
    "footers_known",
    "footers_to_read",
    "is_conversion_path",
    "read_conversion",
    "with_conversion",
    "with_converted",
]

PARQUET_REF = "refs/convert/parquet"
CONVERSION_PATH = "/" + PARQUET_REF  # the derived file's path in a snapshot (never a repo path)
MAX_SHARDS = 10_000  # shards kept of one conversion; the rest are counted as skipped
MAX_FOOTERS_PER_SPLIT = 32  # a split with more shards has its first one's footer read (columns, no rows)
MAX_FOOTERS = 256  # footers read of one conversion, in all
_PARTIAL = "partial-"
_FORMAT = 1  # the document's own version


@dataclass(frozen=True)
class Shard:
    path: str
    size: int | None
    oid: str | None  # the LFS sha256 (a re-upload with other content changes it)
    rows: int | None = None  # its footer's num_rows, where read


@dataclass(frozen=True)
class ConvertedSplit:
    """One split as converted: its shards; `partial` when the converter took only its first part;
    from the shards' parquet footers its `rows` (None unless every shard's was read) and `columns`
    (the first shard's); `note` why rows or columns are missing."""

    name: str
    shards: tuple[Shard, ...]
    partial: bool = False
    rows: int | None = None
    columns: tuple[Column, ...] | None = None
    note: str | None = None

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


Entry = tuple[str, int | None, str | None]  # a tree entry: path, size, LFS sha256


def _splits(entries: Iterable[Entry]) -> tuple[dict[tuple[str, str], tuple[bool, list[Entry]]], int]:
    """The shards by (config, split), in path order, at most `MAX_SHARDS`; and how many were skipped."""
    out: dict[tuple[str, str], tuple[bool, list[Entry]]] = {}
    skipped = kept = 0
    for entry in sorted(entries, key=lambda e: e[0]):
        where = _layout(entry[0])
        if where is None or kept >= MAX_SHARDS:
            skipped += int(where is not None or entry[0].endswith(".parquet"))  # .gitattributes and the like are no shards
            continue
        config, split, partial = where
        was, shards = out.get((config, split), (False, []))
        shards.append(entry)
        out[(config, split)] = (was or partial, shards)
        kept += 1
    return out, skipped


def footers_to_read(entries: Iterable[Entry]) -> dict[str, int]:
    """The shards whose footers are read (path → size): every shard of a split of at most
    `MAX_FOOTERS_PER_SPLIT`, the first of a larger one, at most `MAX_FOOTERS` in all."""
    out: dict[str, int] = {}
    for _, shards in _splits(entries)[0].values():
        chosen = shards if len(shards) <= MAX_FOOTERS_PER_SPLIT else shards[:1]
        if len(out) + len(chosen) > MAX_FOOTERS:
            chosen = chosen[:1] if len(out) < MAX_FOOTERS else []
        out.update({path: size for path, size, _ in chosen if size is not None})
    return out


def footers_known(previous: bytes, entries: Iterable[Entry]) -> dict[str, Footer]:
    """The footers an earlier kept document read of `entries`' shards (path → Footer), by LFS oid:
    a shard of the same content has the same footer, whatever its path. Its columns are those the
    earlier document kept for the shard's split."""
    earlier = read_conversion(Snapshot("", {}, {CONVERSION_PATH: previous}))
    if earlier is None:
        return {}
    by_oid: dict[str, Footer] = {}
    for split in (s for splits in earlier.configs.values() for s in splits.values()):
        for shard in split.shards:
            if shard.oid is not None and shard.rows is not None and split.columns is not None:
                by_oid.setdefault(shard.oid, Footer(shard.rows, split.columns))
    return {path: by_oid[oid] for path, _, oid in entries if oid is not None and oid in by_oid}


def _read_split(shards: list[Entry], footers: Mapping[str, Footer | str]) -> dict[str, Any]:
    """A split's rows, columns and note from the footers read of its shards."""
    found = [footers.get(path) for path, _, _ in shards]
    errors = [f for f in found if isinstance(f, str)]
    read = [f for f in found if isinstance(f, Footer)]
    rows = sum(f.rows for f in read) if len(read) == len(shards) else None
    note = errors[0] + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "") if errors else None
    if note is None and rows is None and footers:
        note = f"rows not counted: {len(read)} of {len(shards)} shards' footers read"
    columns = [[c.name, c.type, list(c.names) if c.names is not None else None] for c in read[0].columns] if read else None
    return {"rows": rows, "columns": columns, "note": note}


def conversion_document(commit: str, date: str | None, entries: Iterable[Entry],
                        footers: Mapping[str, Footer | str] | None = None) -> bytes:  # fmt: skip
    """The stored form of a conversion from its tree entries and the footers read of its shards
    (path → `Footer`, or why it could not be read), sorted and canonical, so the same branch state
    always stores the same bytes."""
    splits, skipped = _splits(entries)
    configs: dict[str, dict[str, dict[str, Any]]] = {}
    for (config, split), (partial, shards) in splits.items():
        entry: dict[str, Any] = {"partial": partial,
                                 "shards": [{"path": p, "size": size, "oid": oid} for p, size, oid in shards]}  # fmt: skip
        if footers is not None:
            entry |= _read_split(shards, footers)
            for shard in entry["shards"]:
                footer = footers.get(shard["path"])
                if isinstance(footer, Footer):
                    shard["rows"] = footer.rows
        configs.setdefault(config, {})[split] = entry
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
        Shard(s["path"], _int(s.get("size")), s.get("oid") if isinstance(s.get("oid"), str) else None, _int(s.get("rows")))
        for s in value["shards"] if isinstance(s, dict) and isinstance(s.get("path"), str)
    )  # fmt: skip
    note = value.get("note")
    return ConvertedSplit(name, shards, value.get("partial") is True, _int(value.get("rows")),
                          _columns(value.get("columns")), note if isinstance(note, str) else None)  # fmt: skip


def _columns(value: Any) -> tuple[Column, ...] | None:
    if not isinstance(value, list):
        return None
    out: list[Column] = []
    for item in value:
        if isinstance(item, list) and len(item) == 3 and isinstance(item[0], str) and isinstance(item[1], str):
            names = item[2]
            out.append(Column(item[0], item[1], tuple(str(n) for n in names) if isinstance(names, list) else None))
    return tuple(out)


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
        stated = {split: SplitMeta(c.rows, None, c.bytes, len(c.shards), c.note) for split, c in sorted(splits.items())}
        columns = known.columns if known is not None and known.columns is not None else _config_columns(splits)
        configs[name] = (ConfigMeta(name, columns, stated, source=PARQUET_REF) if known is None
                         else replace(known, columns=columns, splits=stated, source=PARQUET_REF))  # fmt: skip
        filled = True
    if not filled:
        return meta
    return replace(meta, configs=configs, default=meta.default or default_config(configs),
                   source=meta.source or PARQUET_REF, conversion=conversion.label)  # fmt: skip


def _config_columns(splits: Mapping[str, ConvertedSplit]) -> tuple[Column, ...] | None:
    """A config's columns from its footers: its train split's, else the first split's that has them."""
    ordered = sorted(splits.values(), key=lambda c: (c.name != "train", c.name))
    return next((c.columns for c in ordered if c.columns is not None), None)
