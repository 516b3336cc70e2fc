"""Pin finder for Jupyter notebooks: code cells as Python, `!` lines as shell, with spans in the raw JSON."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from hubwatch.domain.remote_data import load_remote_json
from hubwatch.pincheck.pins_python import scan_python
from hubwatch.pincheck.pins_shell import scan_notebook_shell
from hubwatch.pincheck.pins_text import Found, drop_weak

__all__ = ["scan_notebook"]

_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")
_ATOM = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity")


@dataclass(frozen=True)
class _Str:
    """A JSON string as decoded, and where its opening quote is in the raw text."""

    value: str
    at: int


def _parse(text: str, i: int) -> tuple[Any, int]:
    """One JSON value at `i` (strings as `_Str`), for text `json.loads` already accepted within depth limits."""
    i = _WS.match(text, i).end()  # type: ignore[union-attr]
    char = text[i]
    if char == '"':
        value, end = _DECODER.raw_decode(text, i)
        return _Str(str(value), i), end
    if char in "[{":
        closing = "]" if char == "[" else "}"
        items: list[Any] = []
        pairs: dict[str, Any] = {}
        i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
        while text[i] != closing:
            if char == "{":
                key, i = _parse(text, i)
                i = _WS.match(text, i).end() + 1  # type: ignore[union-attr]  # the ':'
                pairs[key.value], i = _parse(text, i)
            else:
                item, i = _parse(text, i)
                items.append(item)
            i = _WS.match(text, i).end()  # type: ignore[union-attr]
            if text[i] == ",":
                i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
        return (pairs if char == "{" else items), i + 1
    match = _ATOM.match(text, i)
    if match is None:
        raise ValueError(f"unexpected {char!r} at {i}")
    return None, match.end()


def _raw_offset(text: str, token: _Str, k: int) -> int:
    """The raw offset of decoded character `k` of the string token (escapes are several raw characters)."""
    p, seen = token.at + 1, 0
    while seen < k:
        if text[p] != "\\":
            p += 1
        elif text[p + 1] != "u":
            p += 2
        elif 0xD800 <= int(text[p + 2 : p + 6], 16) < 0xDC00 and text[p + 6 : p + 8] == "\\u":
            p += 12  # a surrogate pair decodes to one character
        else:
            p += 6
        seen += 1
    return p


def _file_span(text: str, pieces: list[_Str], span: tuple[int, int]) -> tuple[int, int] | None:
    """A span in a cell's joined code as a span in the notebook's raw text (within one source string)."""
    start = 0
    for piece in pieces:
        end = start + len(piece.value)
        if start <= span[0] and span[1] <= end:
            a = _raw_offset(text, piece, span[0] - start)
            b = _raw_offset(text, piece, span[1] - start)
            return (a, b) if b - a == span[1] - span[0] else None  # an escaped revision: not rewritten
        start = end
    return None


def _pieces(source: Any) -> list[_Str]:
    if isinstance(source, _Str):
        return [source]
    return [p for p in source if isinstance(p, _Str)] if isinstance(source, list) else []


def scan_notebook(text: str) -> tuple[list[Found], str | None]:
    """Pins in a notebook's code cells; each span is an offset range into the notebook file's text."""
    try:
        notebook = load_remote_json(text)  # a notebook nested past the limit is unreadable, not a crash
        cells = notebook["cells"]
        raw_cells = _parse(text, 0)[0]["cells"]
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        return [], f"not a readable notebook ({exc.__class__.__name__})"
    found: list[Found] = []
    problems = []
    for number, (cell, raw) in enumerate(zip(cells if isinstance(cells, list) else [], raw_cells), start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code" or not isinstance(raw, dict):
            continue
        source = cell.get("source", "")
        code = "".join(source) if isinstance(source, list) else str(source)
        pieces = _pieces(raw.get("source"))
        lines = code.split("\n")
        # IPython magics and shell escapes are not Python: blank them for ast (same length, so
        # offsets hold), scan `!` lines as shell.
        python = "\n".join(" " * len(ln) if ln.lstrip().startswith(("!", "%")) else ln for ln in lines)
        cell_found, problem = scan_python(python)
        if problem:
            problems.append(f"cell {number}: {problem}")
        cell_found += scan_notebook_shell(lines)
        for f in drop_weak(cell_found):
            span = _file_span(text, pieces, f.span) if f.span and "".join(p.value for p in pieces) == code else None
            found.append(replace(f, cell=number, span=span))
    return found, "; ".join(problems) or None
