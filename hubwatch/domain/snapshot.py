"""What hubwatch keeps of one revision: the file listing and the contents of the tracked files."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Mapping

from hubwatch.domain.files import FileRecord

__all__ = ["Snapshot", "TRACKED_PATTERNS", "UNREADABLE_HEADER", "is_tracked", "unreadable_header"]

# The key of the stand-in header stored for a safetensors file whose header cannot be read (a length
# beyond the file or the limits, nesting without end, not JSON): {UNREADABLE_HEADER: "the reason"}.
UNREADABLE_HEADER = "__unreadable__"


def unreadable_header(header: object) -> str | None:
    """Why a stored safetensors header could not be read, or None when it is a real one."""
    if isinstance(header, dict) and UNREADABLE_HEADER in header:
        return str(header[UNREADABLE_HEADER])
    return None

# Files whose content is fetched and stored for every revision (everything else: listing only).
TRACKED_PATTERNS: tuple[str, ...] = (
    "config.json",
    "generation_config.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "tokenizer.json",
    "added_tokens.json",
    "chat_template.jinja",
    "chat_template.json",
    "additional_chat_templates/*",
    "preprocessor_config.json",
    "processor_config.json",
    "*.safetensors.index.json",
    "*.py",
    "README.md",
)


def is_tracked(path: str) -> bool:
    """True when the file's content is fetched and stored (not just listed)."""
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in TRACKED_PATTERNS)


@dataclass(frozen=True)
class Snapshot:
    """One revision as seen by the tracker.

    `files`: the whole listing (path → size, LFS sha256); `contents`: raw bytes of the tracked
    files; `safetensors`: per `*.safetensors` file, its parsed header
    (tensor name → {"dtype": str, "shape": [int, …]}), read by range requests, never the weights.
    """

    sha: str
    files: Mapping[str, FileRecord]
    contents: Mapping[str, bytes] = field(default_factory=dict)
    safetensors: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def text(self, path: str) -> str | None:
        raw = self.contents.get(path)
        return None if raw is None else raw.decode("utf-8", errors="replace")
