from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .errors import PipelineError

DEFAULT_MODEL_NAME = "Qwen/Qwen3-TTS-12Hz-0.6B-Base"
DEFAULT_MODEL_REVISION = "5d83992436eae1d760afd27aff78a71d676296fc"
CHUNKING_VERSION = 1
MANIFEST_SCHEMA_VERSION = 1
