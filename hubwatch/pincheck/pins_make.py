"""Pin finder for Makefiles: variables as make assigns them, recipe lines read as shell (never run)."""

from __future__ import annotations

import re
from bisect import bisect_right

from hubwatch.pincheck.pins_shell import pair_variables, scan_shell
from hubwatch.pincheck.pins_shwords import Script
from hubwatch.pincheck.pins_text import Found, Piece, Value, line_starts, strip_comment

__all__ = ["scan_make"]

_ASSIGN = re.compile(r"^(?:(?:export|override)\s+)*([A-Za-z_][A-Za-z0-9_.-]*)\s*(?:::|:|\?|\+|!)?=\s*(.*?)\s*$")
_REF = re.compile(r"\$(?:\(([A-Za-z_][A-Za-z0-9_.-]*)\)|\{([A-Za-z_][A-Za-z0-9_.-]*)\})")


def _value(text: str, at: int, env: dict[str, Value]) -> Value:
    """A make variable's value: literal text where written plainly, `$(NAME)` read through `env`."""
    out, last = Value(), 0
    for ref in _REF.finditer(text):
        if ref.start() > last:
            out = out + Value.of(text[last:ref.start()], at + last)
        name = ref.group(1) or ref.group(2)
        out = out + (env[name] if name in env else Value.dynamic(frozenset({name})))
        last = ref.end()
    if last < len(text):
        out = out + Value.of(text[last:], at + last)
    if "$" in "".join(p.text for p in out.pieces if p.at is not None):
        return Value.dynamic()  # a function call ($(shell …), $(word …)) or an automatic variable
    return Value(tuple(Piece(p.text, p.at) for p in out.pieces), out.names)


def _logical(text: str) -> list[tuple[str, list[int | None]]]:
    """Lines with their continuations joined (`\\` newline: one space), each character's offset beside it."""
    out: list[tuple[str, list[int | None]]] = []
    chars: list[str] = []
    offsets: list[int | None] = []
    at = 0
    for raw in text.split("\n"):
        line = raw.rstrip("\r")
        if line.endswith("\\"):
            chars += [*line[:-1], " "]
            offsets += [*range(at, at + len(line) - 1), None]
        else:
            chars += list(line)
            offsets += list(range(at, at + len(line)))
            out.append(("".join(chars), offsets))
            chars, offsets = [], []
        at += len(raw) + 1
    if chars:
        out.append(("".join(chars), offsets))
    return out


def scan_make(text: str) -> list[Found]:
    """Downloads and servers in recipe lines (as `scan_shell` reads them), with the Makefile's variables
    (`NAME = …`, `:=`, `?=`, `export NAME = …`) followed into `$(NAME)` and `${NAME}`."""
    starts = line_starts(text)
    env: dict[str, Value] = {}
    assigned: dict[str, tuple[Value, int]] = {}
    recipe: list[str] = []  # the recipes as shell text, with where each character is in the file
    where: list[int | None] = []
    for line, offsets in _logical(text):
        if line.startswith("\t"):
            k = len(line) - len(line.lstrip("\t"))
            while k < len(line) and line[k] in "@-+":
                k += 1
            _recipe_line(line[k:], offsets[k:], recipe, where)
            continue
        match = _ASSIGN.match(strip_comment(line))
        if match is not None and offsets and all(o is not None for o in offsets):
            first = offsets[0]
            assert first is not None
            value = _value(match.group(2), first + match.start(2), env)
            env[match.group(1)] = value
            assigned[match.group(1)] = (value, first)
    shell = "".join(recipe)

    def line_of(k: int) -> int:
        at = next((o for o in where[k:] if o is not None), len(text))
        return bisect_right(starts, at)

    found, script = scan_shell(shell, env, lambda k: where[k] if k < len(where) else None, line_of)
    made = Script(dict(env), assigned, script.used)
    return found + pair_variables(made, lambda at: bisect_right(starts, at))


def _recipe_line(body: str, offsets: list[int | None], recipe: list[str], where: list[int | None]) -> None:
    """One recipe line as shell: make's `$$` is the shell's `$`, `$(NAME)` reads as `${NAME}`."""
    k = 0
    while k < len(body):
        if body.startswith("$$", k):
            recipe.append("$")
            where.append(offsets[k])
            k += 2
            continue
        ref = _REF.match(body, k)
        if ref is not None and ref.group(1):
            recipe.append("${" + ref.group(1) + "}")
            where.extend([None, None, *offsets[k + 2:ref.end() - 1], None])
            k = ref.end()
            continue
        recipe.append(body[k])
        where.append(offsets[k])
        k += 1
    recipe.append("\n")
    where.append(None)
