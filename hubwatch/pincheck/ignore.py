"""Acknowledged advisories for `hubwatch check`: `[[ignore]]` in `.hubwatch.toml` or `[tool.hubwatch]`, and `--ignore`.

An entry names an advisory id and why it is acknowledged (`reason`, required in a file: whoever
reads the repository later needs it), and optionally an expiry (`until`, a date): the entry
applies before that day (UTC) and is expired from that day on, as osv-scanner's `ignoreUntil`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Sequence

from hubwatch.pincheck.errors import IgnoreConfigError

__all__ = ["CONFIG_FILE", "Acknowledgements", "IgnoreEntry", "load_acknowledgements", "read_entries"]

CONFIG_FILE = ".hubwatch.toml"
_KEYS = frozenset({"id", "reason", "until"})
_FIX = 'each entry is [[ignore]] with id = "…", reason = "…" and optionally until = YYYY-MM-DD'


@dataclass(frozen=True)
class IgnoreEntry:
    """One acknowledgement: which advisory, why, until when, and where it was written."""

    id: str
    reason: str
    until: date | None
    source: str  # the file (and table) it came from, or "--ignore"

    def expired(self, today: date) -> bool:
        return self.until is not None and today >= self.until

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "reason": self.reason, "until": self.until.isoformat() if self.until else None,
                "source": self.source}


@dataclass(frozen=True)
class Acknowledgements:
    """The entries that apply today, and those that expired (reported, no longer applied)."""

    active: tuple[IgnoreEntry, ...] = ()
    expired: tuple[IgnoreEntry, ...] = ()

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(e.id for e in self.active)


def _entry(raw: object, where: str, number: int) -> IgnoreEntry:
    name = f"{where}: ignore entry {number}"
    if not isinstance(raw, dict):
        raise IgnoreConfigError(f"{name} is not a table", _FIX)
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise IgnoreConfigError(f"{name} has unknown key {unknown[0]!r}", _FIX + " (no other keys)")
    ident = raw.get("id")
    if not isinstance(ident, str) or not ident.strip():
        raise IgnoreConfigError(f"{name} has no id", 'add id = "<advisory id>" (as `hubwatch check` lists it)')
    label = f"{where}: ignore entry {number} ({ident})"
    reason = raw.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise IgnoreConfigError(f"{label} has no reason", 'add reason = "…": why this advisory does not apply to you')
    until = raw.get("until")
    bad = IgnoreConfigError(f"{label} has until = {until!r}, not a date",
                            "write until = YYYY-MM-DD (a TOML date, or that text), or leave it out")
    if isinstance(until, str):
        try:
            until = date.fromisoformat(until)
        except ValueError:
            raise bad from None
    if until is not None and type(until) is not date:  # a datetime or a number is not an expiry day
        raise bad
    return IgnoreEntry(ident.strip(), reason.strip(), until, where)


def read_entries(path: Path, table: Sequence[str] = ()) -> list[IgnoreEntry]:
    """The `ignore` entries of a TOML file, under `table` (e.g. ("tool", "hubwatch")); [] when absent."""
    where = path.name + (f" [{'.'.join(table)}]" if table else "")
    try:
        data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise IgnoreConfigError(f"cannot read {path}: {exc}", "make it a readable UTF-8 file") from exc
    except tomllib.TOMLDecodeError as exc:
        raise IgnoreConfigError(f"{path.name} is not valid TOML: {exc}", "correct the TOML syntax") from exc
    for key in table:
        data = data.get(key) if isinstance(data, dict) else None
    if not isinstance(data, dict) or "ignore" not in data:
        return []
    entries = data["ignore"]
    if not isinstance(entries, list):
        raise IgnoreConfigError(f"{where}: ignore is not a list of tables", _FIX)
    return [_entry(raw, where, number) for number, raw in enumerate(entries, start=1)]


def load_acknowledgements(root: Path, today: date, cli_ids: Sequence[str] = ()) -> Acknowledgements:
    """The acknowledgements for a scan of `root` (a folder, or a file: its folder's), split by `today`."""
    folder = root if root.is_dir() else root.parent
    entries: list[IgnoreEntry] = []
    if (folder / CONFIG_FILE).is_file():
        entries += read_entries(folder / CONFIG_FILE)
    if (folder / "pyproject.toml").is_file():
        entries += read_entries(folder / "pyproject.toml", ("tool", "hubwatch"))
    for ident in cli_ids:
        if not ident.strip():
            raise IgnoreConfigError("--ignore was given an empty id", "pass the advisory id: --ignore ID")
        entries.append(IgnoreEntry(ident.strip(), "", None, "--ignore"))
    active = tuple(e for e in entries if not e.expired(today))
    live = {e.id for e in active}
    expired = tuple(e for e in entries if e.expired(today) and e.id not in live)
    return Acknowledgements(active, expired)
