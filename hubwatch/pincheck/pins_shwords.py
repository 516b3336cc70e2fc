"""Shell words as a shell reads them: quotes, `$VAR`, `${VAR:-default}`, `$(…)` (never run), line by line."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from hubwatch.pincheck.pins_text import Piece, Value, strip_comment

__all__ = ["Reader", "Script", "Word", "cut", "logical_lines"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PARAM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])(?:(:?[-=])(.*))?", re.S)
_GH_ENV = re.compile(r"\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}")
_BREAK = ";&|()\n"
_MAX_NESTING = 16  # ${A:-${B:-…}} read this deep; deeper is computed at run time


@dataclass(frozen=True)
class Word:
    value: Value
    at: int  # offset in the scanned text of its first character


@dataclass
class Script:
    """What a script has set so far (in order of the lines read), and which variables pins read."""

    env: dict[str, Value] = field(default_factory=dict)
    assigned: dict[str, tuple[Value, int]] = field(default_factory=dict)  # name → (value, offset of the line)
    used: set[str] = field(default_factory=set)


class Reader:
    """Splits one logical line into commands of words, resolving `$VAR`, `${VAR:-default}` and quotes."""

    def __init__(self, s: str, pos: Sequence[int], file_at: Callable[[int], int | None], script: Script,
                 depth: int = 0) -> None:
        self.s, self.pos, self.file_at, self.script, self.depth = s, pos, file_at, script, depth

    def _lit(self, i: int, j: int | None = None) -> Value:
        j = i + 1 if j is None else j
        pieces: list[Piece] = []
        for k in range(i, j):
            at = self.file_at(self.pos[k]) if self.pos[k] >= 0 else None
            last = pieces[-1] if pieces else None
            if last is not None and last.at is not None and at is not None and last.at + len(last.text) == at:
                pieces[-1] = Piece(last.text + self.s[k], last.at)
            else:
                pieces.append(Piece(self.s[k], at))
        return Value(tuple(pieces))

    def _param(self, inner: str, start: int) -> Value:
        """`${inner}` (`inner` starting at `start`): a variable, with its `:-`/`-`/`:=`/`=` default when unset."""
        expression = _GH_ENV.fullmatch(inner)  # GitHub Actions' ${{ env.NAME }}
        if expression is not None:
            inner = expression.group(1)
        match = _PARAM.fullmatch(inner)
        if match is None or (match.group(2) is None and match.group(3) is not None):
            return Value.dynamic()
        name, default = match.group(1), match.group(3)
        if name in self.script.env:
            return Value(self.script.env[name].pieces, self.script.env[name].names | {name})
        if default is None or self.depth >= _MAX_NESTING:
            return Value.dynamic(frozenset({name}))
        first = start + match.start(3)
        words = Reader(self.s, self.pos, self.file_at, self.script, self.depth + 1).words(first, first + len(default), inner=True)
        value = words[0][0].value if words and words[0] else Value()
        return Value(value.pieces, value.names | {name})

    def _closing(self, i: int, open_: str, close: str) -> int:
        depth = 0
        while i < len(self.s):
            if self.s[i] == open_:
                depth += 1
            elif self.s[i] == close:
                depth -= 1
                if depth == 0:
                    return i
            i += 1
        return len(self.s) - 1

    def _dollar(self, i: int) -> tuple[Value, int]:
        s = self.s
        if i + 1 < len(s) and s[i + 1] == "{":
            end = self._closing(i + 1, "{", "}")
            return self._param(s[i + 2:end], i + 2), end + 1
        if i + 1 < len(s) and s[i + 1] == "(":
            return Value.dynamic(), self._closing(i + 1, "(", ")") + 1
        match = _NAME.match(s, i + 1)
        if match:
            return self._param(match.group(0), i + 1), match.end()
        if i + 1 < len(s) and s[i + 1] in "0123456789@*#?$!-":
            return Value.dynamic(), i + 2
        return self._lit(i), i + 1

    def words(self, i: int, end: int, inner: bool = False) -> list[list[Word]]:
        """Commands (split at ; && || | and parentheses), each a list of words."""
        s = self.s
        commands: list[list[Word]] = [[]]
        current: Value | None = None
        start = i
        quote = None
        while i < end:
            char = s[i]
            part: Value | None = None
            if quote == "'":
                if char == "'":
                    quote, i = None, i + 1
                    continue
                part, i = self._lit(i), i + 1
            elif char == "\\" and i + 1 < end:
                part, i = Value.of(s[i + 1]), i + 2
            elif char == "$":
                part, i = self._dollar(i)
            elif char == "`":
                close = s.find("`", i + 1, end)
                part, i = Value.dynamic(), (close if close >= 0 else end - 1) + 1
            elif quote == '"':
                if char == '"':
                    quote, i = None, i + 1
                    continue
                part, i = self._lit(i), i + 1
            elif char in "'\"":
                if current is None:
                    start, current = i, Value()
                quote, i = char, i + 1
                continue
            elif (char.isspace() or char in _BREAK) and not inner:
                if current is not None:
                    commands[-1].append(Word(current, self.pos[start]))
                    current = None
                if char in _BREAK and commands[-1]:
                    commands.append([])
                i += 1
                continue
            else:
                part, i = self._lit(i), i + 1
            if current is None:
                start = i - 1
            current = part if current is None else current + part
        if current is not None:
            commands[-1].append(Word(current, self.pos[start] if start < len(self.pos) else 0))
        return [c for c in commands if c]


def cut(value: Value, start: int) -> Value:
    """The value from character `start` on."""
    pieces, offset = [], 0
    for piece in value.pieces:
        stop = offset + len(piece.text)
        if stop > start:
            skip = max(0, start - offset)
            pieces.append(Piece(piece.text[skip:], None if piece.at is None else piece.at + skip))
        offset = stop
    return Value(tuple(pieces), value.names)


def logical_lines(text: str) -> list[tuple[str, list[int]]]:
    """Logical lines (continuations joined, comments removed), each with its characters' offsets in `text`."""
    out: list[tuple[str, list[int]]] = []
    chars: list[str] = []
    pos: list[int] = []
    at = 0
    for raw in text.split("\n"):
        start, at = at, at + len(raw) + 1
        line = strip_comment(raw.rstrip("\r")).rstrip()
        if line.endswith("\\"):
            chars += [*line[:-1], " "]
            pos += [*range(start, start + len(line) - 1), -1]
            continue
        chars += list(line)
        pos += range(start, start + len(line))
        out.append(("".join(chars), pos))
        chars, pos = [], []
    return out


