"""Updates whose commit upstream took off the main line: withdrawn, and published again when it returns (pure).

An update record says "the revisions before this commit lack what it brought" (`fixed: <commit>`).
When a force-push drops that commit from the main branch, no revision upstream now has brings it:
a pin on the rewound head cannot move to it, and telling that pin it "lacks" the update (and failing
its check, painting its badge red) is a claim about a history that no longer exists. Such a record is
withdrawn, with the reason in `database_specific.withdrawn_because` and a paragraph in its details;
when upstream pushes the commit back (a restore, or a later head that descends from it), the record
is published again as it was. Hazards are left alone: a pin still on the dropped commit carries
what it carries. Records withdrawn for any other reason (a re-derivation, an operator) are never
published again here, and inherited records (docs/derivatives.md) are the derivatives check's.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from hubwatch.advisories.advise_match import direction_of
from hubwatch.advisories.inherit import is_inherited
from hubwatch.domain.records import AdvisoryRecord, Direction
from hubwatch.domain.times import rfc3339

__all__ = ["OFF_MAIN_LINE", "off_main_line_updates"]

OFF_MAIN_LINE = "commit_off_main_line"  # database_specific.withdrawn_because
_MARK = "\n\nWithdrawn: upstream rewrote the main branch and commit {sha} is no longer on it, so no revision on the main line brings this update; it is published again if upstream pushes the commit back."


def _bumped(record: AdvisoryRecord, now: datetime) -> datetime:
    moment = now.replace(microsecond=0)
    return moment if moment > record.modified else record.modified + timedelta(seconds=1)


def _withdrawn_here(osv: dict[str, Any]) -> bool:
    ds = osv.get("database_specific")
    return isinstance(ds, dict) and ds.get("withdrawn_because") == OFF_MAIN_LINE


def off_main_line_updates(
    records: Sequence[AdvisoryRecord], off_line: Iterable[str], now: datetime
) -> list[AdvisoryRecord]:
    """The records to upsert once `off_line` (the stored commits not on the main line, after a
    force-push or a restore) is what upstream's history leaves out: each update raised at one of
    those commits withdrawn, each update this module withdrew whose commit is back published
    again. `modified` is bumped on both; a second call with the same inputs' result returns nothing."""
    off = frozenset(off_line)
    out: list[AdvisoryRecord] = []
    for record in records:
        if is_inherited(record.osv) or direction_of(record.osv) is not Direction.UPDATE:
            continue
        dropped = record.revision_sha in off
        if dropped and record.withdrawn is None:
            moment = _bumped(record, now)
            osv = copy.deepcopy(record.osv)
            osv["database_specific"]["withdrawn_because"] = OFF_MAIN_LINE
            osv["details"] = str(osv.get("details", "")) + _MARK.format(sha=record.revision_sha[:12])
            osv["modified"] = rfc3339(moment)
            out.append(AdvisoryRecord(record.id, record.repo, record.revision_sha, osv, moment, withdrawn=moment))
        elif not dropped and record.withdrawn is not None and _withdrawn_here(record.osv):
            moment = _bumped(record, now)
            osv = copy.deepcopy(record.osv)
            del osv["database_specific"]["withdrawn_because"]
            osv.pop("withdrawn", None)
            mark = _MARK.format(sha=record.revision_sha[:12])
            details = str(osv.get("details", ""))
            osv["details"] = details[: -len(mark)] if details.endswith(mark) else details
            osv["modified"] = rfc3339(moment)
            out.append(AdvisoryRecord(record.id, record.repo, record.revision_sha, osv, moment, withdrawn=None))
    return out
