"""`--pins PATH`: which of a message's advisories affect the pins in a code base, and where they are.

The code base is scanned when the message is sent (it may have moved its pins since the
subscription was made) by the scanner behind `hubwatch check`, and each commit pin is looked up in
the store the same way. A pin without a revision (or on `main`) runs whatever the head is, so an
advisory raised at the new head that the head carries (a hazard) affects it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hubwatch.domain.records import RepoId

if TYPE_CHECKING:
    from hubwatch.pincheck.pins import Pin
    from hubwatch.storage import Store

__all__ = ["pin_repos", "restrict_to_pins"]


def pin_repos(path: Path) -> list[str]:
    """The repos pinned under `path` (lowercased org/name); the scan's errors propagate."""
    from hubwatch.pincheck.pins import scan_path

    return sorted({str(p.repo).lower() for p in scan_path(path).pins})


def restrict_to_pins(store: Store, path: str, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """`payload` with only the advisories that affect a pin under `path` and the pins they affect
    (`pins`: advisory, where, revision); None when no pin is affected."""
    from hubwatch.pincheck.pincheck import StoreSource, check_pins
    from hubwatch.pincheck.pins import scan_path

    root = Path(path)
    if not root.exists():
        return None
    repo = RepoId.parse(str(payload["repo"]))
    key = str(repo).lower()
    pins = [p for p in scan_path(root).pins if str(p.repo).lower() == key]
    rewrite = payload.get("rewrite")
    if isinstance(rewrite, Mapping):
        return _dropped_pins(store, pins, payload, rewrite)
    restore = payload.get("restore")
    if isinstance(restore, Mapping):
        return _restored_pins(store, pins, payload, restore)
    wanted = {str(a.get("id")): a for a in payload.get("advisories", [])}
    hits: list[dict[str, Any]] = []
    for report in check_pins(pins, StoreSource(store)):
        if report.status == "affected":
            for hit in report.hits:
                if hit.id in wanted and not hit.ignored:
                    hits.append({"advisory": hit.id, "where": report.pin.where, "revision": report.commit})
        elif report.status == "unpinned" and report.pin.kind == "unpinned":
            for advisory_id, osv in wanted.items():
                ds = osv.get("database_specific")
                if isinstance(ds, Mapping) and ds.get("direction") == "hazard":
                    hits.append({"advisory": advisory_id, "where": report.pin.where, "revision": None})
    if not hits:
        return None
    affected = {h["advisory"] for h in hits}
    return {**payload, "advisories": [a for i, a in wanted.items() if i in affected], "pins": hits}


def _dropped_pins(store: Store, pins: list[Pin], payload: Mapping[str, Any], rewrite: Mapping[str, Any]
                  ) -> dict[str, Any] | None:
    """A force-push's message with the pins on a commit it dropped (`pins`: where, revision and the
    main line's revision to move to, as `hubwatch check` tells it); None when no pin is on one."""
    from hubwatch.pincheck.pincheck import StoreSource, check_pins

    dropped = {str(sha) for sha in rewrite.get("dropped", [])}
    hits = [{"dropped": True, "where": r.pin.where, "revision": r.commit,
             "move_to": r.suggestion.commit if r.suggestion is not None else None}
            for r in check_pins(pins, StoreSource(store)) if r.commit in dropped]
    return {**payload, "pins": hits} if hits else None


def _restored_pins(store: Store, pins: list[Pin], payload: Mapping[str, Any], restore: Mapping[str, Any]
                   ) -> dict[str, Any] | None:
    """A restore's message with the pins on a commit it put back on the main line (`pins`: where and
    revision, the pin resolved as `hubwatch check` resolves it); None when no pin is on one."""
    from hubwatch.pincheck.pincheck import StoreSource, check_pins

    restored = {str(sha) for sha in restore.get("restored", [])}
    hits = [{"restored": True, "where": r.pin.where, "revision": r.commit}
            for r in check_pins(pins, StoreSource(store)) if r.commit in restored]
    return {**payload, "pins": hits} if hits else None
