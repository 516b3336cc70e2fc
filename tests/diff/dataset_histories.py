"""Test helper: the dataset histories of tests/data/datasets as Snapshots, the way the tracker
would see them (the emulator's loader gives each file the size, git oid and LFS sha256 the hub
reports; the card, `dataset_infos.json` and `*.py` contents are kept)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from hubwatch.diff import diff_dataset_snapshots
from hubwatch.domain.records import FileRecord
from hubwatch.domain.snapshot import Snapshot
from hubwatch.hubsim.repos import load_repo

DATASETS = Path(__file__).resolve().parents[2] / "tests" / "data" / "datasets"
REVIEWS = DATASETS / "hubwatch-test__reviews"
IMDB = DATASETS / "stanfordnlp__imdb"
EMOTION = DATASETS / "dair-ai__emotion"
GOLDEN = Path(__file__).resolve().parent / "golden" / "datasets"
_CONTENTS = ("README.md", "dataset_infos.json")

__all__ = ["DATASETS", "EMOTION", "GOLDEN", "IMDB", "REVIEWS", "all_dataset_histories", "dataset_golden",
           "dataset_versions"]


def all_dataset_histories() -> list[Path]:
    """Every dataset history folder with a HISTORY.tsv."""
    return [p for p in sorted(DATASETS.iterdir()) if (p / "HISTORY.tsv").exists()]


def dataset_versions(folder: Path) -> dict[str, Snapshot]:
    """Every version of a dataset history folder by name (`v1` …), as Snapshots."""
    history = load_repo(folder, "dataset")
    out: dict[str, Snapshot] = {}
    for commit in history.commits:
        files = {p: FileRecord(p, f.size, f.blob_id, f.lfs_sha256) for p, f in commit.files.items()}
        contents = {p: f.read() for p, f in commit.files.items() if p in _CONTENTS or p.endswith(".py")}
        out[commit.version] = Snapshot(commit.sha, files, contents)
    return out


def dataset_golden(folder: Path) -> list[dict[str, Any]]:
    """Per version: what_changed and the (kind, severity, direction, path, summary) found against
    the version before (v1 against nothing)."""
    with (folder / "HISTORY.tsv").open(newline="", encoding="utf-8") as fh:
        rows = {r["version"]: r for r in csv.DictReader(fh, delimiter="\t")}
    out: list[dict[str, Any]] = []
    previous: Snapshot | None = None
    for version, snapshot in dataset_versions(folder).items():
        changes = diff_dataset_snapshots(previous, snapshot)
        out.append({
            "version": version,
            "what_changed": rows.get(version, {}).get("what_changed", ""),
            "changes": [{"kind": c.kind.value, "severity": c.severity.value, "direction": c.direction.value,
                         "path": c.path, "summary": c.summary} for c in changes],
        })  # fmt: skip
        previous = snapshot
    return out
