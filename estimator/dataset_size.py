"""Samples per epoch and an estimated tokens per sample of a training run, from a dataset's metadata.

The summary is what a dataset's card (`dataset_info`) or `dataset_infos.json` states per config and
split: rows (`num_examples`) and bytes (`num_bytes`, the Arrow size of every column); or, where
neither does, the hub's parquet conversion: rows from its shards' footers, and no Arrow bytes. Samples per
epoch are the split's rows, as stated. Tokens per sample are an estimate, never a count: the
split's bytes per row divided by `BYTES_PER_TOKEN` (about 4 bytes of English text per token for
BPE tokenizers), and only for a config whose columns are all text, labels or numbers (an image,
audio or video column's bytes are not text; columns the metadata does not name give no estimate).
The Arrow size counts every column and its offsets, so the estimate runs high for short texts with
many label or number columns. No row is read.

`summary_of` builds the summary from any metadata of the diff's shape (`hubwatch.diff.dataset_meta`'s
`DatasetMeta`, read from the hub by the tracker or from the store by the web app), described here
by protocols so the estimator imports nothing else of hubwatch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Protocol

from hubwatch.estimator.frozen import frozen

__all__ = ["BYTES_PER_TOKEN", "ConfigSize", "DatasetRun", "DatasetSizeError", "DatasetSummary", "MetaLike", "SplitSize",
           "dataset_run", "summary_of"]

BYTES_PER_TOKEN = 4.0  # bytes of text per token, roughly, for English and BPE tokenizers
# Column types whose bytes are not text, inside the written-out types of hubwatch.diff.dataset_meta
# (`image`, `list[audio]`, `struct{frames: video}`, `array2d`).
_MEDIA = re.compile(r"(^|[\[:]\s*)(image|audio|video|pdf|nifti|binary|large_binary|array[2-5]d)\b")


class DatasetSizeError(ValueError):
    """A config or split the metadata lacks, or metadata with no row count: `field` names the setting
    (`config`, `split` or `dataset`), `available` what the metadata has instead."""

    def __init__(self, field: str, problem: str, available: tuple[str, ...] = ()) -> None:
        shown = f" (available: {', '.join(available)})" if available else ""
        super().__init__(f"{field}: {problem}{shown}")
        self.field = field
        self.problem = problem
        self.available = available


@frozen
class SplitSize:
    """One split's rows and bytes, as the dataset's metadata states them (None: not stated)."""

    rows: int | None
    bytes: int | None = None


@frozen
class ConfigSize:
    """One config's splits; `columns` the written-out type of each column (None: not named)."""

    name: str
    splits: Mapping[str, SplitSize] = field(default_factory=dict)
    columns: tuple[tuple[str, str], ...] | None = None


@frozen
class DatasetSummary:
    """What a dataset revision's metadata says of its sizes; `source` the file they were read from."""

    dataset: str
    revision: str
    configs: Mapping[str, ConfigSize]
    default: str | None = None
    source: str | None = None
    rows_from: str = "num_examples"  # what the source calls a split's rows


@frozen
class DatasetRun:
    """Samples per epoch (stated) and tokens per sample (estimated, or None with `tokens_note` saying why)."""

    dataset: str
    revision: str
    config: str
    split: str
    samples: int
    samples_from: str
    tokens_per_sample: int | None
    tokens_from: str
    bytes_per_row: float | None = None

    def to_json(self) -> dict[str, object]:
        return {"dataset": self.dataset, "revision": self.revision, "config": self.config, "split": self.split,
                "rows": self.samples, "rows_from": self.samples_from,
                "tokens_per_sample": self.tokens_per_sample, "tokens_per_sample_estimated": True,
                "tokens_from": self.tokens_from,
                "bytes_per_row": None if self.bytes_per_row is None else round(self.bytes_per_row, 1)}


class _ColumnLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...


class _SplitLike(Protocol):
    @property
    def rows(self) -> int | None: ...
    @property
    def bytes(self) -> int | None: ...


class _ConfigLike(Protocol):
    @property
    def splits(self) -> Mapping[str, _SplitLike]: ...
    @property
    def columns(self) -> Sequence[_ColumnLike] | None: ...


class MetaLike(Protocol):
    """A dataset revision's metadata as the diff reads it: configs by name, the default config, the source."""

    @property
    def configs(self) -> Mapping[str, _ConfigLike]: ...
    @property
    def default(self) -> str | None: ...
    @property
    def source(self) -> str | None: ...
    @property
    def conversion(self) -> str | None:
        """`refs/convert/parquet@<commit>` when the hub's parquet conversion stated the splits."""
        ...


_CONVERSION = "refs/convert/parquet"  # the source the diff names when only the parquet conversion states splits


def summary_of(dataset: str, revision: str, meta: MetaLike) -> DatasetSummary:
    """The sizes `meta` states of `dataset` at commit `revision` (rows and bytes per split, column types)."""
    configs = {
        name: ConfigSize(name, {split: SplitSize(s.rows, s.bytes) for split, s in config.splits.items()},
                         None if config.columns is None else tuple((c.name, c.type) for c in config.columns))
        for name, config in meta.configs.items()
    }  # fmt: skip
    if meta.source == _CONVERSION:  # rows from the shards' parquet footers, no Arrow bytes
        return DatasetSummary(dataset, revision, configs, meta.default,
                              f"the hub's parquet conversion ({meta.conversion or _CONVERSION})",
                              "rows in its parquet footers")  # fmt: skip
    return DatasetSummary(dataset, revision, configs, meta.default, meta.source)


def _pick_config(summary: DatasetSummary, config: str | None) -> ConfigSize:
    names = tuple(summary.configs)
    if not names:
        raise DatasetSizeError("dataset", f"{summary.dataset} at {summary.revision[:12]}: the card states no "
                                          "configs or splits (no dataset_info, no dataset_infos.json)")
    if config is not None:
        found = summary.configs.get(config)
        if found is None:
            raise DatasetSizeError("config", f"{summary.dataset} has no config {config!r}", names)
        return found
    if summary.default is not None and summary.default in summary.configs:
        return summary.configs[summary.default]
    if len(names) == 1:
        return summary.configs[names[0]]
    raise DatasetSizeError("config", f"{summary.dataset} has {len(names)} configs and no default: name one", names)


def _tokens(config: ConfigSize, split: SplitSize, rows: int) -> tuple[int | None, str, float | None]:
    if split.bytes is None or split.bytes <= 0:
        return None, "no estimate: the metadata states no num_bytes for this split", None
    per_row = split.bytes / rows
    if config.columns is None:
        return None, "no estimate: the metadata names no columns, so their bytes may not be text", per_row
    media = [name for name, kind in config.columns if _MEDIA.search(kind)]
    if media:
        return None, f"no estimate: column {media[0]} holds media, not text", per_row
    if not any("string" in kind for _, kind in config.columns):
        return None, "no estimate: no column holds text", per_row
    tokens = max(1, round(per_row / BYTES_PER_TOKEN))
    how = f"estimated: {per_row:,.0f} bytes per row (num_bytes / num_examples) / {BYTES_PER_TOKEN:g} bytes per token"
    return tokens, how, per_row


def dataset_run(summary: DatasetSummary, config: str | None = None, split: str = "train") -> DatasetRun:
    """The run's samples per epoch (the split's rows) and estimated tokens per sample (see the module doc).

    `config` None: the default config, else the only one. A config or split the metadata lacks, or a
    split without a row count, is a DatasetSizeError naming it and listing what there is.
    """
    chosen = _pick_config(summary, config)
    names = tuple(chosen.splits)
    if not names:
        raise DatasetSizeError("split", f"{summary.dataset} config {chosen.name!r}: the metadata states no splits "
                                        "(rows are counted only where dataset_info or dataset_infos.json says them)")
    size = chosen.splits.get(split)
    if size is None:
        raise DatasetSizeError("split", f"{summary.dataset} config {chosen.name!r} has no split {split!r}", names)
    if size.rows is None or size.rows < 1:
        raise DatasetSizeError("split", f"{summary.dataset} {chosen.name}/{split}: the metadata states no rows "
                                        f"(num_examples {size.rows!r})")
    where = summary.source or "the card"
    tokens, how, per_row = _tokens(chosen, size, size.rows)
    return DatasetRun(summary.dataset, summary.revision, chosen.name, split, size.rows,
                      f"{where}: {chosen.name}/{split} {summary.rows_from}", tokens, how, per_row)
