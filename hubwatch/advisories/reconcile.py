"""Re-derived advisories against the published ones: what to publish, update and withdraw (pure).

Used when the advisory model changes (`ADVISORY_MODEL`): a repo's records are derived again from
its stored history and compared by id with those already published.
- same id, same record (ignoring `modified`): left alone, id and content kept;
- same id, different record (the same commit and meaning, described anew — e.g. a hazard that now
  closes, or a summary without "fixed in this revision"): updated, `modified` bumped;
- an id the new model no longer derives (its meaning changed, e.g. a dtype change once a risk and now
  an update): withdrawn (`withdrawn` set, `modified` bumped), content kept; the new record for the
  same commit has its own id and is published;
- a new id: published.
A record withdrawn before (by an operator, or by an earlier re-derivation) stays withdrawn. An
inherited advisory (docs/families.md) is the family check's: left alone.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from hubwatch.advisories.inherit import is_inherited
from hubwatch.domain.records import AdvisoryRecord
from hubwatch.domain.times import rfc3339

__all__ = ["ADVISORY_MODEL", "reconcile"]

# 1: risk/fix (every neutral change a risk); 2: issue 9's hazards and updates, moves, hazard keys.
ADVISORY_MODEL = 2


def _content(osv: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in osv.items() if k not in ("modified", "withdrawn")}


def _bumped(record: AdvisoryRecord, now: datetime) -> datetime:
    """`now` in whole seconds, strictly later than the record's `modified` (the later one wins)."""
    moment = now.replace(microsecond=0)
    return moment if moment > record.modified else record.modified + timedelta(seconds=1)


def reconcile(published: Sequence[AdvisoryRecord], derived: Sequence[AdvisoryRecord], now: datetime) -> list[AdvisoryRecord]:
    """The records to upsert so the store holds `derived`, withdrawing what it no longer holds.

    Inherited advisories (raised on a derivative for its base's record, docs/families.md) are not
    derived from the repo's own history: they are left to the family check, never withdrawn here."""
    published = [r for r in published if not is_inherited(r.osv)]
    old = {r.id: r for r in published}
    out: list[AdvisoryRecord] = []
    for record in derived:
        before = old.get(record.id)
        if before is None:
            out.append(record)
            continue
        if before.withdrawn is not None or _content(before.osv) == _content(record.osv):
            continue
        moment = _bumped(before, now)
        osv = {**copy.deepcopy(record.osv), "modified": rfc3339(moment)}
        out.append(AdvisoryRecord(record.id, record.repo, record.revision_sha, osv, moment))
    kept = {r.id for r in derived}
    for record in published:
        if record.id in kept or record.withdrawn is not None:
            continue
        moment = _bumped(record, now)
        osv = {**copy.deepcopy(record.osv), "modified": rfc3339(moment)}  # `withdrawn` is added as published
        out.append(AdvisoryRecord(record.id, record.repo, record.revision_sha, osv, moment, withdrawn=moment))
    return out
