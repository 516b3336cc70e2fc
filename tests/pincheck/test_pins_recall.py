"""The scanner on the corpus of real pinning files (benchmarks/data/pins_corpus): recall holds, nothing misattributed."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.pin_recall import measure


def test_real_files_recall_and_no_wrong_attribution() -> None:
    result = measure()
    assert result.files >= 20
    assert result.wrong == []  # no revision given to a model it does not belong to, no status misreported
    assert result.commit_recall >= 0.9  # measured 19 of 20 commit pins (the scanner before: 1 of 20)
    assert result.found["moving"] == result.expected["moving"]
    assert result.found["unknown"] == result.expected["unknown"]


def test_real_files_dataset_pins_apart_from_models() -> None:
    result = measure(repo_type="dataset")
    assert result.files >= 16
    assert result.wrong == [] and result.confusions == 0  # no dataset read as a model, nor a model as a dataset
    assert result.found["pinned-sha"] >= 4  # measured 4 of 5 (the scanner before issue 33's scan work: 2 of 5)
    assert result.found["moving"] == result.expected["moving"]
    assert result.found["unknown"] == result.expected["unknown"]


def test_a_dataset_reported_as_a_model_counts_as_a_confusion(tmp_path: Path) -> None:
    (tmp_path / "get.sh").write_text("hf download o/d --revision abcdef1\nhf download o/m --repo-type dataset\n")
    (tmp_path / "MANIFEST.json").write_text(json.dumps({"files": [{"file": "get.sh", "expected": [
        {"repo": "o/d", "revision": "abcdef1", "line": 1, "status": "pinned-sha", "type": "dataset"},
        {"repo": "o/m", "revision": "main", "line": 2, "status": "moving"}]}]}))
    datasets, models = measure(tmp_path, "dataset"), measure(tmp_path, "model")
    assert datasets.found["pinned-sha"] == 0 and datasets.missed and datasets.confusions == 1  # o/m as a dataset
    assert models.found["moving"] == 0 and models.confusions == 1  # o/d as a model
