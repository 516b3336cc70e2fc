"""Unified text diffs with a size cap (templates, code files, rendered prompts)."""

from __future__ import annotations

import difflib

__all__ = ["diff_text", "line_counts"]


def diff_text(a: str | None, b: str | None, *, old_name: str = "old", new_name: str = "new",
              context: int = 3, max_chars: int = 20_000) -> str:  # fmt: skip
    """A unified diff of two texts ("" when equal); longer diffs are cut with a note."""
    a, b = a or "", b or ""
    if a == b:
        return ""
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
    added = removed = 0
    for line in difflib.unified_diff((a or "").splitlines(), (b or "").splitlines(), n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed
