"""The (file, key) pairs an advisory written by hubwatch names: what a later change may undo (pure).

The advisories room matches changes against them (`hubwatch.advisories.advise_match`); storage
indexes each record under them, so that a revision is planned against the records it may undo.
"""

from __future__ import annotations

from typing import Any

__all__ = ["detail_files", "entry_keys", "record_keys"]


def detail_files(detail: dict[str, Any]) -> frozenset[str]:
    """The files a change's detail names: its `files` list, else its one `file`."""
    files = detail.get("files")
    if isinstance(files, list) and files and all(isinstance(f, str) for f in files):
        return frozenset(files)
    file = detail.get("file")
    return frozenset([file]) if isinstance(file, str) and file else frozenset()


def entry_keys(entry: Any) -> frozenset[tuple[str, str | None]]:
    """The (file, key) pairs under which a later change can undo this advisory entry (`undoes`):
    a whole-file entry (key None) under each file it names; a keyed entry under its file and key
    (its file and None when the key is not text). A change matches only entries sharing a pair
    with its `change_keys` (`hubwatch.advisories.advise_match`); an entry that no change can match has none."""
    detail = entry.get("detail") if isinstance(entry, dict) else None
    if not isinstance(detail, dict):
        return frozenset()
    key, file = detail.get("key"), detail.get("file")
    if key is None:  # `undoes`: a change without a key, in the opposite direction, covering its files
        return frozenset((f, None) for f in detail_files(detail))
    if not isinstance(file, str):  # a keyed change always names its file: none can match this entry
        return frozenset()
    return frozenset([(file, key if isinstance(key, str) else None)])


def record_keys(osv: Any) -> frozenset[tuple[str, str | None]]:
    """`entry_keys` over the entries of a record written by hubwatch (none for a record of another
    shape): what the store indexes, so that a revision is planned against the records it may undo."""
    ds = osv.get("database_specific") if isinstance(osv, dict) else None
    changes = ds.get("changes") if isinstance(ds, dict) else None
    if not isinstance(changes, list):
        return frozenset()
    return frozenset().union(*(entry_keys(e) for e in changes))
