"""diff_dataset_snapshots: what changed between two revisions of a dataset repo, in the one vocabulary.

From the card's YAML (`dataset_info`, `configs`, licence, gating, task categories…), the legacy
`dataset_infos.json`, the hub's parquet conversion where the card states no splits
(`dataset_parquet`) and the file listing with its oids; never a row of data, never a script run.
The kinds: `schema`, `splits`, `subsets`, `data_files` (dataset_schema, dataset_splits,
dataset_files), and as for models `custom_code` (a loading script), `pickle`, `license`, `card`,
`files`. docs/changes.md, *Datasets*, gives each kind's severity and direction.
"""

from __future__ import annotations

from dataclasses import replace

from hubwatch.domain.records import ChangeRecord, Kind, RepoType, Severity
from hubwatch.domain.snapshot import Snapshot

from .card import DATASET_CARD, diff_card
from .changes import as_initial
from .dataset_files import data_files_of, diff_data_files
from .dataset_meta import CARD_FILE, dataset_meta
from .dataset_parquet import is_conversion_path, read_conversion, with_converted
from .dataset_schema import diff_schema
from .dataset_splits import diff_splits, diff_subsets
from .engine import diff_snapshots, order
from .files import diff_files

__all__ = ["diff_dataset_snapshots", "diff_repo_snapshots"]


def _without(snapshot: Snapshot, paths: set[str]) -> Snapshot:
    """The listing less `paths` and the parquet conversion (a derived file, not one of the repo's)."""
    files = {p: f for p, f in snapshot.files.items() if p not in paths and not is_conversion_path(p)}
    return Snapshot(snapshot.sha, files, snapshot.contents)


def _as_script(record: ChangeRecord) -> ChangeRecord:
    """A dataset's `*.py` is its loading script: `load_dataset(…, trust_remote_code=True)` runs it."""
    if record.kind is not Kind.CUSTOM_CODE:
        return record
    summary = record.summary.replace("custom code", "loading script", 1)
    if record.severity is Severity.HIGH:
        summary += " (load_dataset runs it when trust_remote_code is set)"
    return replace(record, summary=summary)


def diff_dataset_snapshots(old: Snapshot | None, new: Snapshot) -> list[ChangeRecord]:
    """What changed from `old` to `new` of a dataset repo, classified (most severe first; [] when
    nothing did). `old=None`: `new` is the first known revision, every record at info with
    `detail["initial"] = True`, as `diff_snapshots` does for models."""
    base = old if old is not None else Snapshot(sha="", files={})
    before, after = dataset_meta(base), dataset_meta(new)
    # The parquet conversion states splits the card does not, and is compared only with another:
    # a revision kept without one (its conversion was not out, or was of an earlier revision) says
    # nothing of what the viewer saw, so no split or config appears or goes for want of it.
    old_conversion, new_conversion = read_conversion(base), read_conversion(new)
    if new_conversion is not None and (old is None or old_conversion is not None):
        before, after = with_converted(before, old_conversion), with_converted(after, new_conversion)
    source = after.source or before.source or CARD_FILE
    described = diff_schema(before.configs, after.configs, source) + diff_splits(before.configs, after.configs, source)
    records = described + diff_subsets(before.configs, before.default, after.configs, after.default, source)
    old_data = data_files_of(base.files, before.configs)
    new_data = data_files_of(new.files, after.configs)
    records += diff_data_files(base.files, old_data, new.files, new_data,
                               described_change=any(r.severity is not Severity.INFO for r in described))  # fmt: skip
    records += [_as_script(r) for r in diff_files(_without(base, old_data), _without(new, new_data))]
    records += diff_card(base, new, DATASET_CARD)
    if old is None:
        records = as_initial(records)
    return sorted(records, key=order)


def diff_repo_snapshots(repo_type: RepoType, old: Snapshot | None, new: Snapshot) -> list[ChangeRecord]:
    """What changed from `old` to `new` in the vocabulary of the repo's type: a dataset's revisions
    read as data (`diff_dataset_snapshots`), a model's as a model's (`diff_snapshots`). Every reader
    of two stored revisions (the poll, a re-derived history, `hubwatch diff`, the compare page) asks
    this, so none reads a dataset as a model."""
    if repo_type is RepoType.DATASET:
        return diff_dataset_snapshots(old, new)
    return diff_snapshots(old, new)
