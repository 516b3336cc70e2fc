"""FileRecord, one file of a revision: in a module of its own so that reading a local config (`hubwatch
estimate CONFIG`) builds snapshots without loading the other domain records (repo ids, kinds, severities).
`hubwatch.domain.records` exports it too."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FileRecord"]


@dataclass(frozen=True)
class FileRecord:
    """One file of a revision: its path, size, LFS sha256 and (for tracked files) content blob."""

    path: str
    size: int | None
    blob_id: str | None = None  # git blob sha1 or LFS sha256 as the hub reports it
    lfs_sha256: str | None = None
    content_sha256: str | None = None  # key of the stored content blob, when the content was fetched
