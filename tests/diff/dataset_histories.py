"""Test helper: the dataset histories of tests/data/datasets as Snapshots, the way the tracker
would see them (the emulator's loader gives each file the size, git oid and LFS sha256 the hub
reports; the card, `dataset_infos.json` and `*.py` contents are kept)."""

from __future__ import annotations

from pathlib import Path

from hubwatch.domain.records import FileRecord
from hubwatch.domain.snapshot import Snapshot
from hubwatch.hubsim.repos import load_repo

DATASETS = Path(__file__).resolve().parents[2] / "tests" / "data" / "datasets"
REVIEWS = DATASETS / "hubwatch-test__reviews"
IMDB = DATASETS / "stanfordnlp__imdb"
EMOTION = DATASETS / "dair-ai__emotion"
_CONTENTS = ("README.md", "dataset_infos.json")

__all__ = ["DATASETS", "EMOTION", "IMDB", "REVIEWS", "dataset_versions"]


def dataset_versions(folder: Path) -> dict[str, Snapshot]:
    """Every version of a dataset history folder by name (`v1` …), as Snapshots."""
    history = load_repo(folder, "dataset")
    out: dict[str, Snapshot] = {}
    for commit in history.commits:
        files = {p: FileRecord(p, f.size, f.blob_id, f.lfs_sha256) for p, f in commit.files.items()}
        contents = {p: f.read() for p, f in commit.files.items() if p in _CONTENTS or p.endswith(".py")}
        out[commit.version] = Snapshot(commit.sha, files, contents)
    return out
