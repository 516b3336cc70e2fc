"""Unified text diffs with a size cap (templates, code files, rendered prompts, model cards).

difflib's matching grows about quadratically with the number of lines, and upstream files are
hostile: texts over `MAX_DIFF_LINES` lines get no line-by-line diff, and their added/removed
counts come from comparing the lines as multisets (linear; exact when lines only move as whole).
"""

from __future__ import annotations

import difflib
from collections import Counter

__all__ = ["MAX_DIFF_LINES", "diff_text", "line_counts"]

MAX_DIFF_LINES = 20_000  # about half a second of difflib on the worst mix of repeated lines


def diff_text(a: str | None, b: str | None, *, old_name: str = "old", new_name: str = "new",
              context: int = 3, max_chars: int = 20_000) -> str:  # fmt: skip
    """A unified diff of two texts ("" when equal); longer diffs are cut with a note."""
    a, b = a or "", b or ""
    if a == b:
        return ""
    old_lines, new_lines = a.count("\n") + 1, b.count("\n") + 1
    if max(old_lines, new_lines) > MAX_DIFF_LINES:
        return f"… no line diff: {old_lines:,} → {new_lines:,} lines, more than {MAX_DIFF_LINES:,}\n"
    lines = difflib.unified_diff(
        a.splitlines(keepends=True), b.splitlines(keepends=True), old_name, new_name, n=context
    )
    out: list[str] = []
    size = 0
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        if size + len(line) > max_chars:
            out.append(f"… diff cut at {max_chars} characters\n")
            break
        out.append(line)
        size += len(line)
    return "".join(out)


def line_counts(a: str | None, b: str | None) -> tuple[int, int]:
    """(lines added, lines removed) between two texts."""
    old, new = (a or "").splitlines(), (b or "").splitlines()
    if max(len(old), len(new)) > MAX_DIFF_LINES:
        before, after = Counter(old), Counter(new)
        return sum((after - before).values()), sum((before - after).values())
    added = removed = 0
    for line in difflib.unified_diff(old, new, n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed
