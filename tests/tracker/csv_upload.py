"""A dataset whose card states no splits or sizes (a CSV upload), converted at each of its two
versions from the reviews' real parquet files (tests/data/datasets/hubwatch-test__reviews/PARQUET),
written into an emulator root by the tests of the parquet conversion."""

from __future__ import annotations

import shutil
from pathlib import Path

from hubwatch.domain.records import RepoId

__all__ = ["CARD", "PARQUET", "UPLOAD", "csv_upload"]

UPLOAD = RepoId.parse("datasets/hubwatch-test/csv-upload")
PARQUET = Path(__file__).parents[1] / "data" / "datasets" / "hubwatch-test__reviews" / "PARQUET"

CARD = "---\nlicense: mit\nconfigs:\n- config_name: default\n  data_files: data/*.csv\n---\n# A CSV upload, no sizes stated\n"


def csv_upload(root: Path) -> Path:
    """A dataset whose card states no splits or sizes (a CSV upload), converted at each of its two
    versions (the reviews' real parquet files): v2's train has two shards (250 rows; its first with
    a title column and float scores) and a validation split appears."""
    folder = root / "datasets" / "hubwatch-test__csv-upload"
    for version, splits in (("v1", {"train": ("v1",), "test": ("v1",)}),
                            ("v2", {"train": ("v3", "v1"), "test": ("v1",), "validation": ("v3",)})):  # fmt: skip
        (folder / version / "data").mkdir(parents=True)
        (folder / version / "README.md").write_text(CARD)
        for split, sources in splits.items():
            (folder / version / "data" / f"{split}.csv").write_text(f"text,label\n{version} {split},1\n")
            for number, source in enumerate(sources):
                shard = folder / "PARQUET" / version / "default" / split / f"{number:04d}.parquet"
                shard.parent.mkdir(parents=True, exist_ok=True)
                name = "train" if split == "validation" else split
                shutil.copyfile(PARQUET / source / "default" / name / "0000.parquet", shard)
    return folder
