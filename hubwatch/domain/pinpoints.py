"""What a pin's standing needs from a linear history, as the store's events index reads it (a value).

Storage fills it (`hubwatch.storage.advisories.pinpoints.pin_points`) without reading the rest of the
history; the advisories room turns it into a `Standing` (`hubwatch.advisories.standing.standing_of`).
"""

from __future__ import annotations

from dataclasses import dataclass

from hubwatch.domain.records import AdvisoryRecord

__all__ = ["PinPoints"]


@dataclass(frozen=True)
class PinPoints:
    """What a pin's standing needs from a linear history, read without the rest of it."""

    known: bool  # the pin is a stored revision
    newest: str | None  # the newest revision of the pin's line (the head's, or the pin's own if a force-push dropped it)
    here: tuple[AdvisoryRecord, ...]  # the live advisories holding the pin
    clean: str | None  # the newest revision of the line no open hazard holds (None: none, or nothing holds the pin)
    held_at_clean: frozenset[str]  # the ids of `here` that hold `clean` too
    dropped: bool = False  # the pin is stored past the head: a force-push dropped it, `newest` is its own line's
