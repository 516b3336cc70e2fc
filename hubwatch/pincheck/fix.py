"""`hubwatch check --fix`: rewrite pinned revisions in place, only the revision's text, atomically.

Each pin knows the span of its revision's text (`Pin.span`); a fix replaces exactly that span and
keeps every other byte of the file. A file is rewritten only when it still reads as UTF-8 and still
holds the pinned revision there; the new text goes to a temporary file beside it, which then
replaces it (`os.replace`), with the old file's permissions.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from hubwatch.pincheck.pins import Pin

__all__ = ["Edit", "FileFix", "apply_fix", "plan_fixes", "unified_diff"]


@dataclass(frozen=True)
class Edit:
    """One revision rewritten: which pin, from what to what."""

    pin: Pin
    old: str
    new: str


@dataclass(frozen=True)
class FileFix:
    """A file's text before and after its edits."""

    path: str  # as the pins name it (relative to the scanned root)
    file: Path
    before: str
    after: str
    edits: tuple[Edit, ...]


def _file_of(root: Path, pin: Pin) -> Path:
    return root if root.is_file() else root / pin.path


def plan_fixes(
    root: Path, targets: Iterable[tuple[Pin, str]], others: Iterable[Pin] = ()
) -> tuple[list[FileFix], list[tuple[Pin, str]]]:
    """The rewrites moving each pin to its target commit, per file, and the pins left alone with why.

    `others`: the scan's other pins; a revision text one of them also reads (a module constant
    used twice, say) is left alone, since rewriting it would move that pin as well.
    """
    targets = list(targets)
    moving = {pin for pin, _ in targets}
    shared = {(p.path, p.span) for p in others if p not in moving and p.span is not None}
    by_file: dict[str, list[tuple[Pin, str]]] = {}
    skipped: list[tuple[Pin, str]] = []
    for pin, target in targets:
        if pin.dynamic or pin.kind != "commit":
            skipped.append((pin, "the revision is computed at run time; change it where it is computed"))
        elif pin.span is None:
            skipped.append((pin, "the revision is not written plainly here; change it by hand"))
        elif (pin.path, pin.span) in shared:
            skipped.append((pin, "another pin reads the same revision text; change it by hand"))
        else:
            by_file.setdefault(pin.path, []).append((pin, target))
    fixes = []
    for path, wanted in sorted(by_file.items()):
        fix, left = _plan_file(root, path, wanted)
        skipped += left
        if fix is not None:
            fixes.append(fix)
    return fixes, skipped


def _plan_file(root: Path, path: str, wanted: list[tuple[Pin, str]]) -> tuple[FileFix | None, list[tuple[Pin, str]]]:
    file = _file_of(root, wanted[0][0])
    try:
        before = file.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [(pin, f"cannot rewrite {path}: {exc.__class__.__name__}") for pin, _ in wanted]
    spans: dict[tuple[int, int], set[str]] = {}
    for pin, target in wanted:
        assert pin.span is not None
        spans.setdefault(pin.span, set()).add(target)
    edits: list[Edit] = []
    skipped: list[tuple[Pin, str]] = []
    chosen: dict[tuple[int, int], str] = {}
    for pin, target in wanted:
        assert pin.span is not None
        start, end = pin.span
        if len(spans[pin.span]) > 1:
            skipped.append((pin, "one revision text serves pins that should move to different commits"))
        elif before[start:end] != pin.revision:
            skipped.append((pin, f"{path} changed since it was scanned"))
        else:
            if pin.span not in chosen and before[start:end] != target:
                edits.append(Edit(pin, before[start:end], target))
            chosen[pin.span] = target
    if not edits:
        return None, skipped
    after = before
    for edit in sorted(edits, key=lambda e: e.pin.span or (0, 0), reverse=True):  # back to front: offsets hold
        start, end = edit.pin.span or (0, 0)
        after = after[:start] + edit.new + after[end:]
    return FileFix(path, file, before, after, tuple(sorted(edits, key=lambda e: e.pin.span or (0, 0)))), skipped


def unified_diff(fix: FileFix) -> str:
    """The fix as a unified diff (a/PATH → b/PATH), as `--dry-run` prints it."""
    lines = difflib.unified_diff(
        fix.before.splitlines(keepends=True), fix.after.splitlines(keepends=True),
        fromfile=f"a/{fix.path}", tofile=f"b/{fix.path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def apply_fix(fix: FileFix) -> None:
    """Write the fixed text: a temporary file in the same folder, the old mode, then `os.replace`."""
    mode = fix.file.stat().st_mode & 0o7777
    handle, temp = tempfile.mkstemp(prefix=f".{fix.file.name}.", suffix=".hubwatch-fix", dir=fix.file.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(fix.after.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, mode)
        os.replace(temp, fix.file)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
