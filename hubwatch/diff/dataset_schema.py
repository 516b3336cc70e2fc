"""Schema changes of a dataset, per config: columns added, removed, renamed, retyped; ClassLabel names.

A column that disappears while one of the very same type (and ClassLabel names) appears is read
as renamed, when that pairing is the only one possible. ClassLabel names in another order keep
every row's integer label while changing what it means: the quietest and worst schema change.
"""

from __future__ import annotations

from hubwatch.domain.records import ChangeRecord, Kind, Severity

from .changes import make_change
from .dataset_meta import CARD_FILE, Column, ConfigMeta, type_family

__all__ = ["diff_columns", "diff_schema"]


def _shown(column: Column) -> str:
    if column.names is not None:
        return f"class_label{list(column.names)}"
    return column.type


def _record(source: str, config: str, column: str, severity: Severity, op: str, old: Column | None,
            new: Column | None, summary: str) -> ChangeRecord:  # fmt: skip
    return make_change(
        Kind.SCHEMA, severity, file=source, key=f"dataset_info.{config}.features.{column}",
        old=None if old is None else {"name": old.name, "type": old.type, "names": list(old.names or ()) or None},
        new=None if new is None else {"name": new.name, "type": new.type, "names": list(new.names or ()) or None},
        summary=f"{config}: {summary}", config=config, column=column, op=op,
    )  # fmt: skip


def _label_change(source: str, config: str, a: Column, b: Column) -> ChangeRecord | None:
    old, new = a.names or (), b.names or ()
    if old == new:
        return None
    if sorted(old) == sorted(new):
        moved = [f"{i}: {x} → {y}" for i, (x, y) in enumerate(zip(old, new)) if x != y]
        return _record(source, config, b.name, Severity.HIGH, "labels_reordered", a, b,
                       f"{b.name} ClassLabel names reordered, label ids now mean other classes ({', '.join(moved[:4])})",
                       )  # fmt: skip
    if new[: len(old)] == old:
        added = list(new[len(old) :])
        return _record(source, config, b.name, Severity.MEDIUM, "labels_added", a, b,
                       f"{b.name} ClassLabel names added: {', '.join(added)}")  # fmt: skip
    return _record(source, config, b.name, Severity.HIGH, "labels_changed", a, b,
                   f"{b.name} ClassLabel names {list(old)} → {list(new)}")  # fmt: skip


def _renames(removed: list[Column], added: list[Column]) -> list[tuple[Column, Column]]:
    """Pairs (old, new) where the old column's type matches exactly one added column and back."""
    pairs: list[tuple[Column, Column]] = []
    for old in removed:
        same = [new for new in added if (new.type, new.names) == (old.type, old.names)]
        back = [o for o in removed if (o.type, o.names) == (old.type, old.names)]
        if len(same) == 1 and len(back) == 1:
            pairs.append((old, same[0]))
    return pairs


def diff_columns(source: str, config: str, old: tuple[Column, ...], new: tuple[Column, ...]) -> list[ChangeRecord]:
    """The schema records of one config whose features are known on both sides."""
    before, after = {c.name: c for c in old}, {c.name: c for c in new}
    removed = [c for n, c in before.items() if n not in after]
    added = [c for n, c in after.items() if n not in before]
    records: list[ChangeRecord] = []
    for a, b in _renames(removed, added):
        removed.remove(a)
        added.remove(b)
        records.append(_record(source, config, b.name, Severity.HIGH, "renamed", a, b,
                               f"column {a.name} renamed to {b.name} ({_shown(b)})"))  # fmt: skip
    for c in removed:
        records.append(_record(source, config, c.name, Severity.HIGH, "removed", c, None,
                               f"column {c.name} ({_shown(c)}) removed"))  # fmt: skip
    for c in added:
        records.append(_record(source, config, c.name, Severity.LOW, "added", None, c,
                               f"column {c.name} ({_shown(c)}) added"))  # fmt: skip
    for name in (n for n in before if n in after):
        a, b = before[name], after[name]
        if a.type != b.type:
            widened = type_family(a.type) == type_family(b.type) and type_family(a.type) in ("numeric", "string")
            records.append(_record(source, config, name, Severity.MEDIUM if widened else Severity.HIGH, "retyped", a, b,
                                   f"column {name} retyped {_shown(a)} → {_shown(b)}"))  # fmt: skip
        elif a.type == "class_label":
            label = _label_change(source, config, a, b)
            if label is not None:
                records.append(label)
    return records


def diff_schema(old: dict[str, ConfigMeta], new: dict[str, ConfigMeta], source: str = CARD_FILE) -> list[ChangeRecord]:
    """Schema records of every config present on both sides with features on both (a config
    added or removed is a `subsets` change; features first described are not a change)."""
    records: list[ChangeRecord] = []
    for name, b in new.items():
        a = old.get(name)
        if a is None or a.columns == b.columns:
            continue
        if a.columns is not None and b.columns is not None:
            records += diff_columns(source, name, a.columns, b.columns)
        elif b.columns is not None:
            records.append(make_change(
                Kind.SCHEMA, Severity.INFO, file=source, key=f"dataset_info.{name}.features", old=None,
                new={c.name: _shown(c) for c in b.columns}, summary=f"{name}: features described ({len(b.columns)} columns)",
                config=name, op="described",
            ))  # fmt: skip
        else:
            records.append(make_change(
                Kind.SCHEMA, Severity.LOW, file=source, key=f"dataset_info.{name}.features",
                old={c.name: _shown(c) for c in a.columns or ()}, new=None,
                summary=f"{name}: features no longer described", config=name, op="undescribed",
            ))  # fmt: skip
    return records
