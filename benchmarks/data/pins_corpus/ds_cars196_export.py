#!/usr/bin/env python3
"""Export authenticated UniCOM final and pre-projection Cars196 features."""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

DATASET_ID = "tanganke/stanford_cars"
DATASET_REVISION = "9abf6cf7d6dfa7b95152a0d6e791ea9435b47a40"
UNICOM_REVISION = "d71992ed969e6c271436ac0a0ee1f3ca61474ac0"
CHECKPOINT_SHA256 = "3916ab5aed3b522fc90345be8b4457fe5dad60801ad2af5a6871c0c096e8d7ea"
BASELINE_FEATURE_SHA256 = "6ddfd7e2c9fd489dff51fa33697c62abf92a45247b52b336c0371f5482231ab3"


def main(arguments: Sequence[str] | None = None) -> int:
    args = _parse_args(arguments)
    if args.output.exists() or args.batch_size < 1:
        raise ValueError("pre-projection export authority differs")
    if sha256(args.checkpoint) != CHECKPOINT_SHA256:
        raise ValueError("teacher checkpoint authority differs")
    if sha256(args.baseline_features) != BASELINE_FEATURE_SHA256:
        raise ValueError("baseline feature authority differs")
    _require_checkout(args.checkout)

    from datasets import load_dataset

    source = load_dataset(DATASET_ID, revision=DATASET_REVISION)
    records = [source[split] for split in ("train", "test")]
    labels = np.concatenate(
        [np.asarray(dataset["label"], dtype=np.int64) for dataset in records]
    )
    return 0
