"""Splits and subsets of a dataset: splits added or removed, row counts and bytes per split; configs
added or removed, the default config, `data_files` patterns.

An evaluation split (test, validation, dev, eval…) that gains rows is said to be a contamination
risk: rows a model may have trained on can join it, and scores on it stop being comparable.
"""

from __future__ import annotations

import re
from typing import Any

from hubwatch.domain.records import ChangeRecord, Kind, Severity

from .changes import counted, make_change
from .dataset_meta import CARD_FILE, ConfigMeta, SplitMeta

__all__ = ["diff_splits", "diff_subsets", "is_evaluation_split"]

_EVALUATION = re.compile(r"(^|[^a-z])(test|validation|valid|val|dev|eval|evaluation|holdout)([^a-z]|$)", re.I)


def is_evaluation_split(name: str) -> bool:
    """Whether a split is held out for evaluation, by its name (`test`, `validation_matched`, …)."""
    return bool(_EVALUATION.search(name))


def _count(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def _stated(s: SplitMeta) -> dict[str, int | None]:
    """What a record keeps of a split: rows and bytes, and the conversion's shards where it states them."""
    out = {"rows": s.rows, "bytes": s.bytes}
    if s.shards is not None:
        out |= {"parquet_bytes": s.parquet_bytes, "shards": s.shards}
    return out


def _rows(s: SplitMeta) -> str:
    if s.rows is None and s.shards is not None:
        return f"in the hub's parquet conversion: {_shards(s)}"
    return f"{_count(s.rows)} rows"


def _shards(s: SplitMeta) -> str:
    return f"{counted(s.shards or 0, 'shard')} of {_count(s.parquet_bytes)} bytes"


def _split_record(source: str, config: str, split: str, a: SplitMeta, b: SplitMeta) -> ChangeRecord | None:
    if a == b:
        return None
    evaluation = is_evaluation_split(split)
    rows_changed = a.rows != b.rows and a.rows is not None and b.rows is not None
    grew = rows_changed and (b.rows or 0) > (a.rows or 0)
    extra: dict[str, Any] = {"config": config, "split": split, "evaluation": evaluation,
                                "rows": {"old": a.rows, "new": b.rows}, "bytes": {"old": a.bytes, "new": b.bytes}}  # fmt: skip
    if not rows_changed and a.bytes == b.bytes:  # only the parquet conversion's shards moved
        if a.shards is None or b.shards is None:
            return None  # one side's conversion does not state the split: nothing to compare
        summary = (f"{config}/{split}: parquet conversion {_shards(a)} → {_shards(b)} (the viewer's copy of the split "
                   "was rewritten; rows not stated)" if a.rows is None or b.rows is None else
                   f"{config}/{split}: parquet conversion {_shards(a)} → {_shards(b)} (rows unchanged)")  # fmt: skip
        return make_change(Kind.SPLITS, Severity.LOW, file=source, key=f"dataset_info.{config}.splits.{split}",
                           old=_stated(a), new=_stated(b), summary=summary, op="parquet", **extra)  # fmt: skip
    if rows_changed:
        summary = f"{config}/{split}: {_count(a.rows)} → {_count(b.rows)} rows"
        if evaluation and grew:
            severity, summary = Severity.HIGH, summary + " (an evaluation split grew: contamination risk, scores not comparable)"
            extra["contamination_risk"] = True
        elif evaluation:
            severity, summary = Severity.MEDIUM, summary + " (an evaluation split shrank: scores not comparable)"
        else:
            severity = Severity.MEDIUM
        op = "rows"
    else:
        severity, op = Severity.LOW, "bytes"
        summary = f"{config}/{split}: {_count(a.bytes)} → {_count(b.bytes)} bytes (rows unchanged)"
    return make_change(Kind.SPLITS, severity, file=source, key=f"dataset_info.{config}.splits.{split}",
                       old=_stated(a), new=_stated(b), summary=summary, op=op, **extra)  # fmt: skip


def diff_splits(old: dict[str, ConfigMeta], new: dict[str, ConfigMeta], source: str = CARD_FILE) -> list[ChangeRecord]:
    """Split records of every config present on both sides (splits from `dataset_info`, else the
    splits its `data_files` name)."""
    records: list[ChangeRecord] = []
    for name, b in new.items():
        a = old.get(name)
        if a is None:
            continue
        source_of = b.source or a.source or source  # the conversion, where it states this config's splits
        before = a.splits or {s: SplitMeta(None, None) for s in a.data_files or {}}
        after = b.splits or {s: SplitMeta(None, None) for s in b.data_files or {}}
        for split in sorted(set(before) | set(after)):
            key = f"dataset_info.{name}.splits.{split}"
            if split not in before:
                s = after[split]
                records.append(make_change(
                    Kind.SPLITS, Severity.MEDIUM, file=source_of, key=key, old=None, new=_stated(s),
                    summary=f"{name}: split {split} added ({_rows(s)})", config=name, split=split, op="added",
                    evaluation=is_evaluation_split(split),
                ))  # fmt: skip
            elif split not in after:
                s = before[split]
                records.append(make_change(
                    Kind.SPLITS, Severity.HIGH, file=source_of, key=key, old=_stated(s), new=None,
                    summary=f"{name}: split {split} removed ({_rows(s)})", config=name, split=split,
                    op="removed", evaluation=is_evaluation_split(split),
                ))  # fmt: skip
            elif (record := _split_record(source_of, name, split, before[split], after[split])) is not None:
                records.append(record)
        if a.dataset_size != b.dataset_size and a.dataset_size is not None and b.dataset_size is not None:
            records.append(make_change(
                Kind.SPLITS, Severity.INFO, file=source_of, key=f"dataset_info.{name}.dataset_size", old=a.dataset_size,
                new=b.dataset_size, summary=f"{name}: dataset_size {_count(a.dataset_size)} → {_count(b.dataset_size)} bytes",
                config=name, op="size",
            ))  # fmt: skip
    return records


def diff_subsets(old: dict[str, ConfigMeta], old_default: str | None, new: dict[str, ConfigMeta],
                 new_default: str | None, source: str = CARD_FILE) -> list[ChangeRecord]:  # fmt: skip
    """Configs added or removed, the default config moved (`source`: the file that names the
    configs), `data_files` patterns changed (always the card's)."""
    records: list[ChangeRecord] = []
    for name in sorted(set(new) - set(old)):
        splits = new[name].splits
        shown = f" ({', '.join(f'{s} {_count(m.rows)}' for s, m in splits.items())} rows)" if splits else ""
        if new[name].source is not None and splits and all(m.rows is None for m in splits.values()):
            shown = f" (splits {', '.join(splits)}, seen by the dataset viewer in the hub's parquet conversion)"
        records.append(make_change(
            Kind.SUBSETS, Severity.LOW, file=new[name].source or source, key=f"configs.{name}", old=None, new=name,
            summary=f"config {name} added{shown}", config=name, op="added",
            splits={s: _stated(m) for s, m in splits.items()},
            columns=[c.name for c in new[name].columns or ()],
        ))  # fmt: skip
    for name in sorted(set(old) - set(new)):
        seen = " from the hub's parquet conversion" if old[name].source is not None else ""
        records.append(make_change(Kind.SUBSETS, Severity.HIGH, file=old[name].source or source, key=f"configs.{name}",
                                   old=name, new=None, summary=f"config {name} removed{seen} (loading it fails)",
                                   config=name, op="removed"))  # fmt: skip
    if old_default != new_default and old and new:
        records.append(make_change(
            Kind.SUBSETS, Severity.HIGH, file=source, key="configs.default", old=old_default, new=new_default,
            summary=f"default config {old_default or 'none'} → {new_default or 'none'} (load_dataset without a config "
                    "name loads another subset)", op="default",
        ))  # fmt: skip
    for name in sorted(set(old) & set(new)):
        a, b = old[name].data_files, new[name].data_files
        if a is not None and b is not None and a != b:
            changed = sorted(s for s in set(a) | set(b) if a.get(s) != b.get(s))
            records.append(make_change(
                Kind.SUBSETS, Severity.MEDIUM, file=CARD_FILE, key=f"configs.{name}.data_files",
                old={s: list(a[s]) for s in changed if s in a}, new={s: list(b[s]) for s in changed if s in b},
                summary=f"{name}: data_files patterns changed for {', '.join(changed)}", config=name, op="data_files",
            ))  # fmt: skip
    return records
