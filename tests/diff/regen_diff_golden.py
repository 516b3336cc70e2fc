"""Regenerate tests/diff/golden/*.json from the histories (review every change by hand!).

Run: .venv/bin/python tests/diff/regen_diff_golden.py
"""

from __future__ import annotations

import json

from dataset_histories import GOLDEN as DATASET_GOLDEN
from dataset_histories import all_dataset_histories, dataset_golden
from diff_histories import GOLDEN, all_histories, golden_entries

if __name__ == "__main__":
    GOLDEN.mkdir(exist_ok=True)
    for history in all_histories():
        target = GOLDEN / f"{history.name}.json"
        target.write_text(json.dumps(golden_entries(history), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {target.relative_to(GOLDEN.parents[2])}")
    DATASET_GOLDEN.mkdir(exist_ok=True)
    for history in all_dataset_histories():
        target = DATASET_GOLDEN / f"{history.name}.json"
        target.write_text(json.dumps(dataset_golden(history), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {target.relative_to(GOLDEN.parents[2])}")
