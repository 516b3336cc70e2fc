"""Text that keeps the point: counted nouns, changes ordered most severe first, and the metadata of
a change's detail told apart from what a reader needs (so no expander holds only metadata)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hubwatch.domain.records import ChangeRecord, Direction, Kind, Severity

__all__ = ["META_KEYS", "by_importance", "plural", "reader_detail", "row_changes"]

# Keys of a change's detail that steer hubwatch (advisory matching, provenance), not a reader.
META_KEYS = frozenset({"direction", "op", "hazards", "clears", "template", "old_file", "history_rewrite"})

# Among changes of one severity, the hazards a pin must act on first: code that runs, then pickles…
_KIND_ORDER = {k: i for i, k in enumerate((
    Kind.CUSTOM_CODE, Kind.PICKLE, Kind.LICENSE, Kind.SPECIAL_TOKENS, Kind.CHAT_TEMPLATE, Kind.ARCHITECTURE,
    Kind.CONTEXT, Kind.DTYPE, Kind.WEIGHTS, Kind.TOKENIZER, Kind.GENERATION_DEFAULTS, Kind.CONFIG, Kind.CARD,
    Kind.FILES, Kind.METADATA,
))}  # fmt: skip


def plural(n: int, word: str, many: str | None = None) -> str:
    """"1 tensor", "2 tensors", "1,204 characters" (`many`: an irregular plural, "advisories")."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def _importance(change: ChangeRecord) -> tuple[int, int, int]:
    hazard = 0 if change.direction is Direction.HAZARD else 1
    return (-change.severity.rank, hazard, _KIND_ORDER.get(change.kind, len(_KIND_ORDER)))


def by_importance(changes: Sequence[ChangeRecord]) -> list[ChangeRecord]:
    """Most severe first; at one severity hazards before updates, then custom code, pickles,
    licence… before chat templates and the rest; stable otherwise."""
    return sorted(changes, key=_importance)


def row_changes(changes: Sequence[ChangeRecord], floor: Severity = Severity.MEDIUM) -> tuple[list[ChangeRecord], int]:
    """What one index row shows of a revision's changes: the most important first, then every other
    change at high or above and every hazard at `floor` or above (never folded into "+N more");
    and how many lesser ones are left."""
    ordered = by_importance(changes)
    high = Severity.HIGH.rank
    shown = [c for i, c in enumerate(ordered)
             if i == 0 or c.severity.rank >= high
             or (c.direction is Direction.HAZARD and c.severity.rank >= floor.rank)]  # fmt: skip
    return shown, len(ordered) - len(shown)


def reader_detail(detail: Mapping[str, Any], shown: frozenset[str]) -> dict[str, Any]:
    """The detail a page has not shown elsewhere, without metadata: empty means no expander."""
    return {k: v for k, v in detail.items() if k not in shown and k not in META_KEYS}
