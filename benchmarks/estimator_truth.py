"""The real configs and their truth counts (tests/data/configs), shared by the estimator benchmarks."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CONFIGS", "TruthRow", "load_rows"]

CONFIGS = Path(__file__).resolve().parent.parent / "tests" / "data" / "configs"


@dataclass(frozen=True)
class TruthRow:
    hf_id: str
    config: dict[str, Any]
    truth: int | None  # params_arch_config_faithful, else published_total
    source: str
    architecture: str
    native: bool  # transformers defines the architecture class


def load_rows(root: Path = CONFIGS) -> list[TruthRow]:
    rows = []
    with open(root / "truth.tsv", newline="") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            config = json.loads((root / r["hf_id"].replace("/", "__") / "config.json").read_text())
            faithful, published = r["params_arch_config_faithful"], r["published_total"]
            truth = int(faithful) if faithful else (int(published) if published else None)
            source = "params_arch_config_faithful" if faithful else ("published_total" if published else "")
            rows.append(TruthRow(r["hf_id"], config, truth, source, r["architecture"], bool(r["params_arch_class"])))
    return rows
