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
inherited advisory (docs/derivatives.md) is the derivatives check's: left alone.

After a rename, `renamed_withdrawn` gives the withdrawn records still naming an earlier id that id
replaced by the repo's current one (package name, range repo, references, summary, details and
`database_specific.repo`), `modified` bumped, id and `withdrawn` kept.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from hubwatch.advisories.inherit import is_inherited
from hubwatch.domain.records import AdvisoryRecord, RepoId
from hubwatch.domain.times import rfc3339

__all__ = ["ADVISORY_MODEL", "reconcile", "renamed_withdrawn"]

# 1: risk/fix (every neutral change a risk); 2: issue 9's hazards and updates, moves, hazard keys;
# 3: what a first stored revision carries is a baseline hazard record, and updates raised at commits
# a force-push dropped are withdrawn (issue 31).
ADVISORY_MODEL = 3


def _content(osv: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in osv.items() if k not in ("modified", "withdrawn")}


def _bumped(record: AdvisoryRecord, now: datetime) -> datetime:
    """`now` in whole seconds, strictly later than the record's `modified` (the later one wins)."""
    moment = now.replace(microsecond=0)
    return moment if moment > record.modified else record.modified + timedelta(seconds=1)


def reconcile(published: Sequence[AdvisoryRecord], derived: Sequence[AdvisoryRecord], now: datetime) -> list[AdvisoryRecord]:
    """The records to upsert so the store holds `derived`, withdrawing what it no longer holds.

    Inherited advisories (raised on a derivative for its base's record, docs/derivatives.md) are not
    derived from the repo's own history: they are left to the derivatives check, never withdrawn here."""
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


def _renamed_text(text: object, old: str, new: str) -> object:
    """`text` with the repo id `old` (as a whole id: not a prefix of a longer name) replaced by `new`."""
    if not isinstance(text, str):
        return text
    return re.sub(rf"(?<![A-Za-z0-9._-]){re.escape(old)}(?![A-Za-z0-9._-])", lambda _: new, text)


def renamed_withdrawn(published: Sequence[AdvisoryRecord], repo: RepoId, now: datetime) -> list[AdvisoryRecord]:
    """The withdrawn records of `published` that still name another id than `repo` (the repo was
    renamed since they were withdrawn), rewritten to name `repo`: every place the record names
    its repo (package, ranges, references, summary, details, `database_specific.repo`). Ids and
    `withdrawn` are kept, `modified` is bumped so mirrors fetch them again. Inherited advisories
    are the derivatives check's and left alone; a second call returns nothing."""
    out: list[AdvisoryRecord] = []
    new = str(repo)
    for record in published:
        ds = record.osv.get("database_specific")
        old = ds.get("repo") if isinstance(ds, dict) else None
        if record.withdrawn is None or is_inherited(record.osv) or not isinstance(old, str) or old == new:
            continue
        osv = copy.deepcopy(record.osv)
        for affected in osv.get("affected") or []:
            if not isinstance(affected, dict):
                continue
            package = affected.get("package")
            if isinstance(package, dict) and "name" in package:
                package["name"] = _renamed_text(package["name"], old, new)
            for ranged in affected.get("ranges") or []:
                if isinstance(ranged, dict) and "repo" in ranged:
                    ranged["repo"] = _renamed_text(ranged["repo"], old, new)
        for reference in osv.get("references") or []:
            if isinstance(reference, dict) and "url" in reference:
                reference["url"] = _renamed_text(reference["url"], old, new)
        for key in ("summary", "details"):
            if key in osv:
                osv[key] = _renamed_text(osv[key], old, new)
        osv["database_specific"]["repo"] = new
        moment = _bumped(record, now)
        osv["modified"] = rfc3339(moment)
        out.append(AdvisoryRecord(record.id, repo, record.revision_sha, osv, moment, withdrawn=record.withdrawn))
    return out
