"""IFEval through the GGUF's own chat template. Generation, so nothing here is HellaSwag.

Contract (docs/recommendation-vfinal-plan.md, step 4 audit):
- `local-chat-completions` sends unrendered messages; llama-server applies the
  jinja template embedded in the GGUF, and `/apply-template` records the text.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import json
import platform
from pathlib import Path
from typing import Any

CONTEXT = 4096
MAX_GEN_TOKS = 1280
SEED = 1234
MODEL_NAME = "jaull-gguf"
RUNTIME_FINGERPRINT = "b10357-689e227db"
DATASET_SIZE = 541
DATASET_REPO = "google/IFEval"
DATASET_REVISION = "966cd89545d6b6acfd7638bc708b98261ca58e84"
DATASET_URL = (
    f"https://huggingface.co/datasets/{DATASET_REPO}/resolve/{DATASET_REVISION}/"
    "ifeval_input_data.jsonl"
)
DATASET_SHA256 = "6a85310ca8ce15eff755aa08a3a4ff931c7e273e7515ebb3c492ea85fd8288f2"
DATASET_BYTES = 207111
