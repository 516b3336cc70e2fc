"""A unified diff as the pages show it: classified lines, with the changed words and marks inside
each replaced line marked (a one-token edit in a 2,000-character template line must be findable)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

__all__ = ["DiffLine", "Segment", "diff_lines"]

_MAX_PAIR = 20_000  # characters of a line pair compared word by word; longer ones stay whole
_MIN_SHARED = 0.2  # below this share of common tokens a pair reads better as two whole lines
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


@dataclass(frozen=True)
class Segment:
    text: str
    changed: bool = False
    blank: bool = False  # only whitespace, so the page outlines it to make it visible


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "file", "hunk", "add", "del", "ctx", "note"
    sign: str  # the diff's first column ("+", "-", " ", "\\") or "" for file and hunk headers
    segments: tuple[Segment, ...]

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.segments)


def _classify(line: str) -> tuple[str, str, str]:
    if line.startswith(("+++ ", "--- ")) or line in ("+++", "---"):
        return "file", "", line
    if line.startswith("@@"):
        return "hunk", "", line
    if line.startswith("\\"):
        return "note", "\\", line[1:]
    if line.startswith("+"):
        return "add", "+", line[1:]
    if line.startswith("-"):
        return "del", "-", line[1:]
    if line.startswith(" "):
        return "ctx", " ", line[1:]
    return "ctx", "", line


def _segment(text: str, spans: Sequence[tuple[int, int]]) -> tuple[Segment, ...]:
    """`text` cut into unchanged and changed runs (`spans` are the changed [start, end) ranges)."""
    out: list[Segment] = []
    at = 0
    for start, end in spans:
        if start > at:
            out.append(Segment(text[at:start]))
        if end > start:
            piece = text[start:end]
            out.append(Segment(piece, changed=True, blank=not piece.strip()))
        at = max(at, end)
    if at < len(text):
        out.append(Segment(text[at:]))
    return tuple(out) or (Segment(""),)


def _trailing(text: str) -> tuple[Segment, ...]:
    """A whole line; trailing whitespace marked so that it is visible."""
    stripped = text.rstrip()
    if stripped == text:
        return (Segment(text),)
    return _segment(text, [(len(stripped), len(text))])


def _tokens(text: str) -> list[str]:
    """Words, whitespace runs and single punctuation marks: marks land on whole words."""
    return _TOKEN.findall(text)


def _spans(tokens: Sequence[str], ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Token ranges as character ranges."""
    starts = [0]
    for token in tokens:
        starts.append(starts[-1] + len(token))
    return [(starts[a], starts[b]) for a, b in ranges]


def _pair(old: str, new: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]] | None:
    if len(old) + len(new) > _MAX_PAIR:
        return None
    old_tokens, new_tokens = _tokens(old), _tokens(new)
    matcher = SequenceMatcher(None, old_tokens, new_tokens, autojunk=False)
    if matcher.ratio() < _MIN_SHARED:
        return None
    old_ranges, new_ranges = [], []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            old_ranges.append((i1, i2))
            new_ranges.append((j1, j2))
    return _segment(old, _spans(old_tokens, old_ranges)), _segment(new, _spans(new_tokens, new_ranges))


def _flush(dels: list[tuple[str, str | None]], adds: list[tuple[str, str | None]], out: list[DiffLine]) -> None:
    """A run of removed lines followed by added ones: the i-th removed pairs with the i-th added.
    Each entry is (line, the "\\ …" note that followed it, if any)."""
    paired = [_pair(o, n) for (o, _), (n, _) in zip(dels, adds)]
    for side, kind, sign in ((dels, "del", "-"), (adds, "add", "+")):
        for i, (text, note) in enumerate(side):
            found = paired[i] if i < len(paired) else None
            segments = (found[0] if kind == "del" else found[1]) if found else _trailing(text)
            out.append(DiffLine(kind, sign, segments))
            if note is not None:
                out.append(DiffLine("note", "\\", (Segment(note),)))
    dels.clear()
    adds.clear()


def diff_lines(text: str) -> list[DiffLine]:
    """The lines of a unified diff, classified, with intra-line changes of replaced lines marked."""
    out: list[DiffLine] = []
    dels: list[tuple[str, str | None]] = []
    adds: list[tuple[str, str | None]] = []
    for raw in text.splitlines():
        kind, sign, body = _classify(raw)
        if kind == "del" and not adds:
            dels.append((body, None))
            continue
        if kind == "add" and dels:
            adds.append((body, None))
            continue
        if kind == "note" and (dels or adds):
            side = adds or dels  # "\\ No newline at end of file" belongs to the line above it
            side[-1] = (side[-1][0], body)
            continue
        _flush(dels, adds, out)
        if kind == "add":
            out.append(DiffLine("add", sign, _trailing(body)))
        else:
            out.append(DiffLine(kind, sign, (Segment(body),)))
    _flush(dels, adds, out)
    return out
