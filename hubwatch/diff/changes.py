"""Building ChangeRecords: the one constructor every file-kind differ uses, and value summaries."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import replace
from typing import Any

from hubwatch.domain.records import ChangeRecord, Direction, Kind, Severity

__all__ = ["UPDATE", "HAZARD", "as_initial", "counted", "make_change", "show", "summarise_value"]

HAZARD = Direction.HAZARD  # the new revision onward is affected
UPDATE = Direction.UPDATE  # revisions before this one are affected

_MAX_SHOWN = 60  # characters of a value shown in a one-line summary
_MAX_DETAIL = 2000  # characters of a value kept verbatim in `detail`


def counted(n: int, word: str, many: str | None = None) -> str:
    """"1 tensor", "3 tensors" (`many`: an irregular plural)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))


def _compact(value: Any, budget: int) -> str:
    """`value` as JSON in about `budget` characters, cut only between values: an object or array
    keeps its first whole members and ends in "…" inside its brackets (a string inside is shown
    whole or not at all); a long string on its own keeps its first whole words and says how long
    it is. Never a cut inside a number, a key or a string member."""
    text = _json(value)
    if len(text) <= budget:
        return text
    if isinstance(value, (dict, list)):
        items = sorted(value.items()) if isinstance(value, dict) else list(enumerate(value))
        opened, closed = ("{", "}") if isinstance(value, dict) else ("[", "]")
        parts: list[str] = []
        used = 2
        for key, item in items:
            head = f"{_json(str(key))}: " if isinstance(value, dict) else ""
            room = budget - used - len(head) - 3  # ", …"
            if room < 8:
                break
            if not isinstance(item, (dict, list)) and len(_json(item)) > room:
                break  # a string or number inside is shown whole or not at all
            piece = head + _compact(item, room)
            if used + len(piece) + 2 > budget and parts:
                break
            parts.append(piece)
            used += len(piece) + 2
        return opened + ", ".join([*parts, "…"] if len(parts) < len(items) else parts) + closed
    if isinstance(value, str):
        head = value[: max(budget - 16, 8)]
        words = head.rsplit(" ", 1)[0] if " " in head else head
        return _json(words)[:-1] + f"…\" ({len(value):,} characters)"
    return text  # a number or literal is never cut


def show(value: Any) -> str:
    """A short, readable rendering of a JSON value for a one-line summary (cut between values,
    never inside one: `{"factor": 8.0, "type": "llama3", …}`)."""
    if value is None:
        return "null"
    if isinstance(value, int) and not isinstance(value, bool) and value >= 10**18:
        return f"{value:.0e} (no limit)"  # transformers' VERY_LARGE_INTEGER sentinel
    if isinstance(value, str) and len(value) <= _MAX_SHOWN and value.isprintable():
        text = value  # plain; anything with newlines or control characters stays JSON-escaped
    else:
        text = _compact(value, _MAX_SHOWN)
    return "".join(_visible(c) for c in text)


def _visible(char: str) -> str:
    """A control, format or unassigned character escaped, so a summary stays one printable line."""
    if not unicodedata.category(char).startswith(("C", "Zl", "Zp")):
        return char
    return f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}"


def summarise_value(value: Any) -> Any:
    """The value as kept in `detail`: verbatim when small, else a size + digest summary."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(text) <= _MAX_DETAIL:
        return value
    import hashlib

    return {
        "summarised": True,
        "type": type(value).__name__,
        "chars": len(text),
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "head": text[:200],
    }


def make_change(
    kind: Kind,
    severity: Severity,
    *,
    file: str,
    key: str | None,
    old: Any,
    new: Any,
    summary: str,
    direction: Direction = UPDATE,
    **extra: Any,
) -> ChangeRecord:
    """One change; `detail` always carries file/key/old/new (summarised when large) and direction.

    A hazard is said explicitly (`direction=HAZARD`, with `hazards=[keys]` in `extra`); every other
    change is an update. `clears=[keys]` names the hazards a change removes (advise_match).
    """
    direction = Direction.parse(direction, f"change of {file}")
    if kind is Kind.METADATA and severity is not Severity.INFO:
        severity = Severity.INFO  # metadata is never above info
    detail: dict[str, Any] = {
        "file": file,
        "key": key,
        "old": summarise_value(old),
        "new": summarise_value(new),
        "direction": direction.value,
    }
    detail.update(extra)
    path = f"{file}:{key}" if key else file
    return ChangeRecord(
        kind=kind, severity=severity, path=path, summary=summary, detail=detail, direction=direction
    )


def as_initial(records: list[ChangeRecord]) -> list[ChangeRecord]:
    """The records of a first revision (a diff from an empty repo): each at info severity, with
    `detail.initial = true` and `detail.severity_if_changed` the severity it would otherwise have."""
    return [
        replace(r, severity=Severity.INFO, detail={**r.detail, "initial": True, "severity_if_changed": r.severity.value})
        for r in records
    ]
