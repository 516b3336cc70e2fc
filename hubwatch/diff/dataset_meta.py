"""A dataset revision's metadata as the diff reads it: configs, their columns, splits and data_files.

Read from the card's YAML block (`dataset_info`, `configs`; parsed by `card.card_metadata`, within
the same limits as a model card) and, for what the card lacks, the legacy `dataset_infos.json`
(within `remote_data`'s JSON limits); where neither states a config's splits, the hub's parquet
conversion does (`dataset_parquet.with_converted`). Nothing else: a loading script is never run and
no data file is opened, so a dataset that only a script describes has no schema or splits here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hubwatch.domain.remote_data import load_remote_json
from hubwatch.domain.snapshot import Snapshot

from .card import card_metadata

__all__ = [
    "CARD_FILE",
    "DEFAULT_CONFIG",
    "INFOS_FILE",
    "Column",
    "ConfigMeta",
    "DatasetMeta",
    "SplitMeta",
    "dataset_meta",
    "default_config",
    "infos_columns",
    "type_family",
]

CARD_FILE = "README.md"
INFOS_FILE = "dataset_infos.json"
DEFAULT_CONFIG = "default"  # what the hub and `datasets` call a config without a name


@dataclass(frozen=True)
class Column:
    """One column: its type written out (`string`, `int32`, `class_label`, `list[string]`,
    `struct{a: string, b: int64}`, …) and, for a ClassLabel, its names in label-id order."""

    name: str
    type: str
    names: tuple[str, ...] | None = None


@dataclass(frozen=True)
class SplitMeta:
    """`rows` and `bytes` (the Arrow size) as stated; where only the hub's parquet conversion states
    the split, `parquet_bytes` and `shards` are its shards' (`dataset_parquet.with_converted`)."""

    rows: int | None
    bytes: int | None
    parquet_bytes: int | None = None
    shards: int | None = None
    note: str | None = field(default=None, compare=False)  # why the conversion's rows are unknown


@dataclass(frozen=True)
class ConfigMeta:
    """One config (subset): columns in order, splits, `data_files` (split → patterns), sizes."""

    name: str
    columns: tuple[Column, ...] | None = None  # None: the metadata names no features
    splits: dict[str, SplitMeta] = field(default_factory=dict)
    data_files: dict[str, tuple[str, ...]] | None = None
    dataset_size: int | None = None
    download_size: int | None = None
    source: str | None = None  # where its splits were read when not the dataset's `source` (the conversion)


@dataclass(frozen=True)
class DatasetMeta:
    """What the diff knows of one dataset revision; `source` names where the features and
    splits were read (`README.md`, `dataset_infos.json`, `refs/convert/parquet` when only the hub's
    parquet conversion states them, or None when none has them); `conversion` the conversion's
    label (`refs/convert/parquet@<commit>`) when it filled any config."""

    configs: dict[str, ConfigMeta]
    default: str | None
    card: dict[str, Any] | None
    card_error: str | None = None
    source: str | None = None
    conversion: str | None = None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)  # the hub writes fractional num_bytes for image datasets (584818053.75)
    return None


def _names(spec: Any) -> tuple[str, ...] | None:
    """ClassLabel names in label-id order: a list, or a mapping id → name (keys `0`, `'0'`)."""
    if isinstance(spec, list):
        return tuple(str(n) for n in spec)
    if isinstance(spec, dict):
        try:
            pairs = sorted((int(str(k)), str(v)) for k, v in spec.items())
        except ValueError:
            return tuple(str(v) for v in spec.values())
        return tuple(name for _, name in pairs)
    return None


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _card_type(spec: Any) -> tuple[str, tuple[str, ...] | None]:
    """The written-out type of a card feature spec (what follows `name:` in `features`)."""
    if isinstance(spec, str):
        return spec, None
    if isinstance(spec, list):  # a struct written as its fields
        fields = [f for f in spec if isinstance(f, dict)]
        inner = ", ".join(f"{f.get('name')}: {_card_type(_without_name(f))[0]}" for f in fields)
        return "struct{" + inner + "}", None
    if isinstance(spec, dict):
        if "class_label" in spec:
            label = spec["class_label"]
            return "class_label", _names(label.get("names") if isinstance(label, dict) else None)
        for wrapper in ("sequence", "list", "large_list"):
            if wrapper in spec:
                return f"{wrapper if wrapper != 'sequence' else 'list'}[{_card_type(spec[wrapper])[0]}]", None
        if "struct" in spec:
            return _card_type(spec["struct"])
        if "dtype" in spec:  # extra keys beside it (a description) do not change the type
            return _card_type(spec["dtype"])
    return _canonical(spec), None


def _without_name(entry: dict[str, Any]) -> Any:
    rest = {k: v for k, v in entry.items() if k != "name"}
    return rest["dtype"] if set(rest) == {"dtype"} else rest


def _card_columns(features: Any) -> tuple[Column, ...] | None:
    if not isinstance(features, list):
        return None
    columns: list[Column] = []
    for entry in features:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            type_, names = _card_type(_without_name(entry))
            columns.append(Column(entry["name"], type_, names))
    return tuple(columns)


def _infos_type(spec: Any) -> tuple[str, tuple[str, ...] | None]:
    """The same written-out type from a `dataset_infos.json` feature (`{"_type": "Value", …}`)."""
    if isinstance(spec, list):
        return f"list[{_infos_type(spec[0])[0] if spec else '?'}]", None
    if not isinstance(spec, dict):
        return _canonical(spec), None
    kind = spec.get("_type")
    if kind == "Value":
        return str(spec.get("dtype")), None
    if kind == "ClassLabel":
        return "class_label", _names(spec.get("names"))
    if kind in ("Sequence", "List", "LargeList"):
        return f"{'large_list' if kind == 'LargeList' else 'list'}[{_infos_type(spec.get('feature'))[0]}]", None
    if kind is None:  # a struct: field → spec
        inner = ", ".join(f"{k}: {_infos_type(v)[0]}" for k, v in spec.items())
        return "struct{" + inner + "}", None
    return str(kind).lower(), None  # Image, Audio, Translation, …


def infos_columns(features: dict[str, Any]) -> tuple[Column, ...]:
    """The columns of a `datasets` features mapping (`dataset_infos.json`'s, or the `huggingface`
    key of a parquet file's footer): name → `{"_type": "Value", …}`."""
    return tuple(Column(str(k), *_infos_type(v)) for k, v in features.items())


def _data_files(value: Any) -> dict[str, tuple[str, ...]] | None:
    """`data_files` as split → patterns: a pattern, a list of patterns (train), or split entries."""
    if isinstance(value, str):
        return {"train": (value,)}
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return {"train": tuple(value)}
    if isinstance(value, list):
        out: dict[str, tuple[str, ...]] = {}
        for entry in value:
            if isinstance(entry, dict) and isinstance(entry.get("split"), str):
                path = entry.get("path")
                out[entry["split"]] = (path,) if isinstance(path, str) else tuple(str(p) for p in path or ())
        return out
    if isinstance(value, dict):
        return {str(k): (v,) if isinstance(v, str) else tuple(str(p) for p in v or ()) for k, v in value.items()}
    return None


def _card_splits(value: Any) -> dict[str, SplitMeta]:
    out: dict[str, SplitMeta] = {}
    for entry in value if isinstance(value, list) else []:
        if isinstance(entry, dict) and entry.get("name") is not None:
            out[str(entry["name"])] = SplitMeta(_int(entry.get("num_examples")), _int(entry.get("num_bytes")))
    return out


def _from_card(card: dict[str, Any]) -> tuple[dict[str, ConfigMeta], str | None]:
    configs: dict[str, ConfigMeta] = {}
    infos = card.get("dataset_info")
    for info in infos if isinstance(infos, list) else [infos] if isinstance(infos, dict) else []:
        if not isinstance(info, dict):
            continue
        name = str(info.get("config_name") or DEFAULT_CONFIG)
        configs[name] = ConfigMeta(
            name, _card_columns(info.get("features")), _card_splits(info.get("splits")), None,
            _int(info.get("dataset_size")), _int(info.get("download_size")),
        )  # fmt: skip
    default: str | None = None
    listed = card.get("configs")
    for entry in listed if isinstance(listed, list) else []:
        if not isinstance(entry, dict):
            continue
        name = str(entry.get("config_name") or DEFAULT_CONFIG)
        known = configs.get(name, ConfigMeta(name))
        configs[name] = ConfigMeta(name, known.columns, known.splits, _data_files(entry.get("data_files")),
                                   known.dataset_size, known.download_size)  # fmt: skip
        if entry.get("default") is True and default is None:
            default = name
    return configs, default


def _from_infos(raw: bytes) -> dict[str, ConfigMeta]:
    try:
        data = load_remote_json(raw)
    except ValueError:
        return {}
    configs: dict[str, ConfigMeta] = {}
    for name, info in data.items() if isinstance(data, dict) else []:
        if not isinstance(info, dict):
            continue
        features = info.get("features")
        columns = None
        if isinstance(features, dict):
            columns = infos_columns(features)
        splits = info.get("splits")
        parsed = {
            str(k): SplitMeta(_int(v.get("num_examples")), _int(v.get("num_bytes")))
            for k, v in (splits.items() if isinstance(splits, dict) else [])
            if isinstance(v, dict)
        }
        configs[str(name)] = ConfigMeta(str(name), columns, parsed, None, _int(info.get("dataset_size")),
                                        _int(info.get("download_size")))  # fmt: skip
    return configs


def dataset_meta(snapshot: Snapshot) -> DatasetMeta:
    """The metadata of one dataset revision (configs by name; the default config, if any).

    The card's `dataset_info` wins; a config it does not describe is taken from
    `dataset_infos.json` when that file's contents are in the snapshot. The default config is the
    one marked `default: true`, else `default`, else the only one.
    """
    card, error = card_metadata(snapshot.text(CARD_FILE))
    configs, default = _from_card(card) if card is not None else ({}, None)
    source = CARD_FILE if any(c.columns is not None or c.splits for c in configs.values()) else None
    raw = snapshot.contents.get(INFOS_FILE)
    if raw is not None:
        for name, legacy in _from_infos(raw).items():
            known = configs.get(name)
            if known is None or (known.columns is None and not known.splits):
                configs[name] = ConfigMeta(
                    name, legacy.columns, legacy.splits, known.data_files if known else None,
                    legacy.dataset_size, legacy.download_size,
                )  # fmt: skip
                source = source or INFOS_FILE
    return DatasetMeta(configs, default if default is not None else default_config(configs), card, error, source)


def default_config(configs: dict[str, ConfigMeta]) -> str | None:
    """The default config when none is marked: `default`, else the only one."""
    return DEFAULT_CONFIG if DEFAULT_CONFIG in configs else next(iter(configs)) if len(configs) == 1 else None


_NUMERIC = ("int", "uint", "float", "double", "half", "decimal", "bool")
_STRING = ("string", "large_string", "utf8")


def type_family(type_: str) -> str:
    """numeric / string / the type itself: a change within a family (int32 → int64) widens."""
    if type_.startswith(_NUMERIC):
        return "numeric"
    if type_ in _STRING:
        return "string"
    return type_
