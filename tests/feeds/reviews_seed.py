"""Test helper: the synthetic dataset history tests/data/datasets/hubwatch-test__reviews (its train split
grows 100 → 150 rows at v3) written through the real Store as the tracker would keep it (the card,
the file listing with sizes and oids, the dataset diff's changes), beside feeds_seed's models; and a
hostile dataset whose card names a config and splits in markup and states no rows for one split."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import yaml

from hubwatch.diff import diff_dataset_snapshots
from hubwatch.domain.records import FileRecord, RepoId, RepoType, RevisionRecord
from hubwatch.domain.snapshot import Snapshot
from hubwatch.hubsim.repos import load_repo
from hubwatch.storage import Store

__all__ = ["EVIL", "HOSTILE_DATASET", "REVIEWS", "REVIEWS_FOLDER", "seed_hostile_dataset", "seed_reviews"]

REVIEWS = RepoId("hubwatch-test", "reviews", RepoType.DATASET)
REVIEWS_FOLDER = Path(__file__).resolve().parents[1] / "data" / "datasets" / "hubwatch-test__reviews"
HOSTILE_DATASET = RepoId("evil-org", "data", RepoType.DATASET)
EVIL = "<script>alert(1)</script>"
_KEPT = ("README.md", "dataset_infos.json")
_HOSTILE_DATE = datetime(2025, 3, 1, tzinfo=UTC)


def seed_reviews(store: Store, upto: int | None = None) -> dict[str, str]:
    """Store the reviews history (v1 … v9, or v1 … v`upto`) as the tracker would; → version → sha."""
    history = load_repo(REVIEWS_FOLDER, "dataset")
    store.watch(REVIEWS)
    shas: dict[str, str] = {}
    previous: Snapshot | None = None
    for commit in history.commits[:upto]:
        files = {p: FileRecord(p, f.size, f.blob_id, f.lfs_sha256) for p, f in commit.files.items()}
        contents = {p: f.read() for p, f in commit.files.items() if p in _KEPT or p.endswith(".py")}
        snapshot = Snapshot(commit.sha, files, contents)
        revision = RevisionRecord(commit.sha, previous.sha if previous else None, commit.date, commit.title,
                                  commit.message, ("hubwatch-test",))
        assert store.save_revision(REVIEWS, revision, list(files.values()), contents,
                                   diff_dataset_snapshots(previous, snapshot), None, [])
        shas[commit.version] = commit.sha
        previous = snapshot
    return shas


def seed_hostile_dataset(store: Store) -> str:
    """One revision of a dataset whose config and split names are markup; its `nosize` split states no rows."""
    meta = {"dataset_info": {"config_name": EVIL,
                             "features": [{"name": f"text{EVIL}", "dtype": "string"}],
                             "splits": [{"name": f"train{EVIL}", "num_bytes": 4000, "num_examples": 10},
                                        {"name": "nosize", "num_bytes": 10}]}}
    readme = f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n".encode()
    sha = "e" * 40
    store.watch(HOSTILE_DATASET)
    revision = RevisionRecord(sha, None, _HOSTILE_DATE, f"upload {EVIL}", f"upload {EVIL}", ("evil",))
    assert store.save_revision(HOSTILE_DATASET, revision, [FileRecord("README.md", len(readme))],
                               {"README.md": readme}, [], None, [])
    return sha
