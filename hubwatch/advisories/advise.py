"""The pure advisory builder: one revision's changes (and earlier advisories) → OSV records."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Iterable, Sequence

from hubwatch.settings import DEFAULT_HUB, Settings
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, Direction, Kind, RepoId, RevisionRecord, Severity
from hubwatch.domain.times import rfc3339
from hubwatch.advisories.advise_match import closes, direction_of, file_key, is_fixed, jsonable, mark_undone, undoes
from hubwatch.advisories.advise_text import render_details, render_summary
from hubwatch.advisories.osv import (
    OSV_SCHEMA_VERSION,
    advisory_id,
    check_prefix,
    parse_osv_timestamp,
    validate_osv,
)

__all__ = ["plan_advisories", "threshold_rank"]

_KIND_ORDER = {kind.value: i for i, kind in enumerate(Kind)}


@dataclass(frozen=True)
class _Entry:
    """One change as it goes into an advisory (direction may differ from the classifier's)."""

    change: ChangeRecord
    direction: Direction
    severity: Severity
    reverts: str | None = None  # id of the update advisory this change undoes


def threshold_rank(settings: Settings) -> int:
    """Lowest severity rank that is advised; info (0) never is."""
    try:
        rank = Severity(settings.advise_min_severity.lower()).rank
    except ValueError as exc:
        raise ValueError(
            f"advise_min_severity {settings.advise_min_severity!r} is not a severity: "
            f"use one of {', '.join(s.value for s in Severity)}"
        ) from exc
    return max(int(rank), int(Severity.LOW.rank))


def plan_advisories(
    repo: RepoId,
    revision: RevisionRecord,
    changes: Sequence[ChangeRecord],
    prior: Sequence[AdvisoryRecord],
    settings: Settings,
    hub_url: str = DEFAULT_HUB,
    web_url: str | None = None,
    id_repo: RepoId | None = None,
    carried: Sequence[AdvisoryRecord] | None = None,
) -> list[AdvisoryRecord]:
    """The advisories to upsert with `revision`: new records for it, and earlier ones it updates.

    A repo's first stored revision (its changes describe its initial state: `detail["initial"]`;
    a root given other changes and no `carried` is not advised) is the baseline: its updates are not news, but what it carries that would
    be a hazard as a change (custom code, a pickle, an invalid file, a template that never renders)
    is a hazard record introduced at that commit, at the severity it would have had as a change
    (`severity_if_changed`), so a pin there is told it carries it. A change that removes what an
    open hazard advisory carries closes it (`fixed: <this commit>`) instead of being advised again;
    a change that undoes an update is advised by its own meaning, and the two records are linked
    (`related`). Every record returned is validated against the OSV schema. Pure: the same inputs
    always give the same records. Ids derive from `id_repo` (the id the store first knew the repo
    by; default `repo`), so a renamed repo keeps its advisory ids.

    `carried`, when given, says `changes` were measured against a revision that is not this one's
    parent (a rewritten history: the old head), and holds the hazard records open there. Only the
    hazards among the changes are advised then; the others only close what they clear. This
    revision is not the carried records' descendant, so their ranges would not reach it; those its
    changes do not clear still hold here, and each gets an `introduced` event at this commit (a
    root, parent None, included: a history squashed upstream keeps what it carried).
    """
    prefix = check_prefix(settings.advisory_prefix)
    minimum = threshold_rank(settings)
    web = (web_url if web_url is not None else settings.public_url).rstrip("/")
    for change in changes:
        Direction.parse(change.direction, f"change {change.path!r}")
    if carried is None and any(c.detail.get("initial") for c in changes):
        return _baseline(repo, revision, changes, minimum, prefix, hub_url, web, id_repo or repo)
    if revision.parent is None and carried is None:
        return []
    ordered = sorted(changes, key=_change_key)
    by_id = {a.id: a for a in (*prior, *(carried or ()))}
    earlier = sorted(
        (a for a in by_id.values() if a.repo == repo and a.withdrawn is None and a.revision_sha != revision.sha),
        key=lambda a: (a.osv.get("published", ""), a.id),
    )
    updated: dict[str, dict[str, Any]] = {}
    entries: list[_Entry] = []
    open_risks = [r for r in earlier if direction_of(r.osv) == Direction.HAZARD and not is_fixed(r.osv)]
    fixes = [r for r in earlier if direction_of(r.osv) == Direction.UPDATE]
    for change in ordered:
        closed_any, reopened = False, None
        for record in open_risks:
            osv = updated.get(record.id, record.osv)
            if any(closes(change, c) for c in osv["database_specific"]["changes"]):
                osv = updated.setdefault(record.id, copy.deepcopy(record.osv))
                mark_undone(osv["database_specific"], change, revision.sha)
                closed_any = True
        for record in fixes:
            reopened = _undone_fix(record.osv["database_specific"], change, record.id)
            if reopened is not None:
                break
        if reopened is not None:
            entries.append(reopened)
        elif not closed_any:
            entries.append(_Entry(change, Direction.parse(change.direction), change.severity))
    if carried is not None:
        # Measured against another revision than the parent, an update's range ("the revisions before
        # this one lack it") would not be what was measured: updates only close what they clear.
        entries = [e for e in entries if e.direction is Direction.HAZARD]
    for record in carried or ():
        if record.withdrawn is not None or direction_of(record.osv) is not Direction.HAZARD:
            continue
        osv = updated.get(record.id, record.osv)
        if not _all_undone(osv) and not _introduced_at(osv, revision.sha):
            _introduce(updated.setdefault(record.id, copy.deepcopy(record.osv)), revision.sha)
    results: list[AdvisoryRecord] = []
    new_ids: dict[Direction, str] = {}
    for direction in Direction:
        chosen = [e for e in entries if e.direction == direction and e.severity.rank >= minimum]
        if chosen:
            record = _build(repo, revision, direction, chosen, prefix, hub_url, web, id_repo or repo)
            new_ids[direction] = record.id
            results.append(record)
    for record in earlier:
        if record.id in updated:
            results.append(_finish_update(record, updated[record.id], revision, hub_url, web, new_ids))
    for reopen in (e for e in entries if e.reverts and e.direction in new_ids and e.severity.rank >= minimum):
        _link_related(results, earlier, reopen, new_ids[reopen.direction], revision, hub_url, web)
    for record in results:
        validate_osv(record.osv)
    return results


def _baseline(
    repo: RepoId, revision: RevisionRecord, changes: Sequence[ChangeRecord], minimum: int, prefix: str, hub: str,
    web: str, id_repo: RepoId,
) -> list[AdvisoryRecord]:
    """The hazard record of what a first stored revision carries (none when it carries nothing)."""
    chosen = []
    for change in sorted((_never_renders(c) for c in changes), key=_change_key):
        if Direction.parse(change.direction) is not Direction.HAZARD:
            continue
        try:
            severity = Severity(str(change.detail.get("severity_if_changed") or change.severity.value))
        except ValueError:
            severity = change.severity
        if severity.rank >= minimum:
            chosen.append(_Entry(replace(change, severity=severity), Direction.HAZARD, severity))
    if not chosen:
        return []
    chosen.sort(key=lambda e: _change_key(e.change))
    record = _build(repo, revision, Direction.HAZARD, chosen, prefix, hub, web, id_repo, baseline=True)
    validate_osv(record.osv)
    return [record]


def _never_renders(change: ChangeRecord) -> ChangeRecord:
    """A first revision's chat template that renders none of the conversations is carried as a
    hazard (one key per conversation, cleared when a later template renders it); one that fails
    only some (DeepSeek-R1's with dict tool arguments) is not: a pin there can chat. As a change
    between revisions, adding such a template is an update (nothing rendered before)."""
    detail = change.detail
    if change.kind is not Kind.CHAT_TEMPLATE or not detail.get("initial") or detail.get("old") is not None:
        return change
    rendered, template = detail.get("rendered"), detail.get("template")
    if not isinstance(rendered, dict) or not isinstance(template, str):
        return change
    ok = set(detail.get("clears") or ())
    failing = [f"template:{template}:{name}" for name in sorted(rendered) if f"template:{template}:{name}" not in ok]
    if not failing or len(failing) < len(rendered):
        return change
    return replace(change, direction=Direction.HAZARD, detail={**detail, "hazards": failing})


def _all_undone(osv: dict[str, Any]) -> bool:
    """Whether every change a hazard record carries (its estimate aside) was undone: it is closed."""
    undoable = [c for c in osv["database_specific"].get("changes", []) if c.get("path") != "estimate"]
    return bool(undoable) and all(c.get("reverted_by") for c in undoable)


def _git_ranges(osv: dict[str, Any]) -> list[dict[str, Any]]:
    return [rng for affected in osv["affected"] for rng in affected["ranges"] if rng.get("type") == "GIT"]


def _introduced_at(osv: dict[str, Any], sha: str) -> bool:
    return all({"introduced": sha} in rng["events"] for rng in _git_ranges(osv))


def _introduce(osv: dict[str, Any], sha: str) -> None:
    """Add `introduced: sha` to each GIT range of `osv` lacking it."""
    for rng in _git_ranges(osv):
        if {"introduced": sha} not in rng["events"]:
            rng["events"].append({"introduced": sha})


def _change_key(change: ChangeRecord) -> tuple[Any, ...]:
    return (
        -change.severity.rank,
        _KIND_ORDER.get(change.kind.value, 99),
        change.path,
        change.summary,
        Direction.parse(change.direction).value,
        json.dumps(jsonable(change.detail), sort_keys=True),
    )


def _undone_fix(ds: dict[str, Any], change: ChangeRecord, record_id: str) -> _Entry | None:
    """The change as advised when it undoes an update: its own meaning and severity, linked back."""
    for entry in ds.get("changes", []):
        if undoes(change, entry):
            return _Entry(change, Direction.parse(change.direction), change.severity, reverts=record_id)
    return None


def _entry_json(entry: _Entry) -> dict[str, Any]:
    change = entry.change
    item: dict[str, Any] = {
        "kind": change.kind.value,
        "severity": entry.severity.value,
        "path": change.path,
        "summary": change.summary,
        "direction": entry.direction.value,
        "detail": jsonable(change.detail),
    }
    file, key = file_key(change)
    item["detail"].setdefault("file", file)
    item["detail"].setdefault("key", key)
    if entry.reverts:
        item["reverts"] = entry.reverts
    return item


def _build(
    repo: RepoId, revision: RevisionRecord, direction: Direction, chosen: list[_Entry], prefix: str, hub: str, web: str,
    id_repo: RepoId, baseline: bool = False,
) -> AdvisoryRecord:
    stamp = rfc3339(revision.date, f"date of revision {revision.sha}")
    repo_url = repo.url(hub)
    items = [_entry_json(e) for e in chosen]
    kinds = sorted({i["kind"] for i in items}, key=lambda k: _KIND_ORDER.get(k, 99))
    top = max((e.severity for e in chosen), key=lambda s: s.rank)
    deltas = [{"path": i["path"], "delta": d} for i in items if (d := _estimate_delta(i)) is not None]
    ds: dict[str, Any] = {
        "source": "hubwatch",
        "repo": str(repo),
        "commit": revision.sha,
        "parent": revision.parent,
        "commit_title": revision.title,
        "direction": direction.value,
        "kinds": kinds,
        "max_severity": top.value,
        "changes": items,
    }
    if deltas:
        ds["estimate_deltas"] = deltas
    if baseline:
        ds["baseline"] = True  # carried from the first stored revision, not brought by a change
    if direction is Direction.HAZARD:
        events: list[dict[str, str]] = [{"introduced": revision.sha}]
    else:
        events = [{"introduced": "0"}, {"fixed": revision.sha}]
    reverts = sorted({e.reverts for e in chosen if e.reverts})
    osv: dict[str, Any] = {
        "schema_version": OSV_SCHEMA_VERSION,
        "id": advisory_id(prefix, id_repo, revision.sha, _utc_year(revision.date), direction),
        "modified": stamp,
        "published": stamp,
        "summary": render_summary(repo, direction.value, items),
        "details": render_details(repo, ds, repo_url, web),
        "affected": [
            {
                "package": {"ecosystem": "GIT", "name": repo_url},
                "ranges": [{"type": "GIT", "repo": repo_url, "events": events}],
            }
        ],
        "references": [
            {"type": "INTRODUCED" if direction is Direction.HAZARD else "FIX", "url": f"{repo_url}/commit/{revision.sha}"},
            {"type": "WEB", "url": f"{web}{repo.page_path}/revisions/{revision.sha}"},
        ],
        "database_specific": ds,
    }
    if reverts:
        osv["related"] = reverts
    return AdvisoryRecord(osv["id"], repo, revision.sha, osv, parse_osv_timestamp(stamp))


def _estimate_delta(item: dict[str, Any]) -> dict[str, Any] | None:
    """The estimate delta an entry carries: `detail.estimate_delta`, or a whole `estimate` change."""
    detail = item["detail"]
    if isinstance(detail.get("estimate_delta"), dict):
        return dict(detail["estimate_delta"])
    if item["path"] == "estimate":
        return {k: v for k, v in detail.items() if k not in ("file", "key", "old", "new")}
    return None


def _utc_year(moment: datetime) -> int:
    utc: datetime = parse_osv_timestamp(rfc3339(moment))
    return utc.year


def _bump(osv: dict[str, Any], revision: RevisionRecord) -> datetime:
    """Set `modified` to this commit's date, strictly later than before (later modified wins)."""
    before: datetime = parse_osv_timestamp(osv["modified"])
    moment: datetime = parse_osv_timestamp(rfc3339(revision.date, f"date of revision {revision.sha}"))
    if moment <= before:
        moment = before + timedelta(seconds=1)
    osv["modified"] = rfc3339(moment)
    return moment


def _finish_update(
    record: AdvisoryRecord,
    osv: dict[str, Any],
    revision: RevisionRecord,
    hub: str,
    web: str,
    new_ids: dict[Direction, str],
) -> AdvisoryRecord:
    ds = osv["database_specific"]
    repo_url = record.repo.url(hub)
    undoable = [c for c in ds.get("changes", []) if c.get("path") != "estimate"]
    if direction_of(osv) is Direction.HAZARD and undoable and all(c.get("reverted_by") for c in undoable):
        for affected in osv["affected"]:
            for rng in affected["ranges"]:
                if not any("fixed" in ev for ev in rng["events"]):
                    rng["events"].append({"fixed": revision.sha})
        ds["fixed_by"] = revision.sha
        osv["references"].append({"type": "FIX", "url": f"{repo_url}/commit/{revision.sha}"})
    osv["details"] = render_details(record.repo, ds, repo_url, web)
    moment = _bump(osv, revision)
    return AdvisoryRecord(record.id, record.repo, record.revision_sha, osv, moment, record.withdrawn)


def _link_related(
    results: list[AdvisoryRecord],
    earlier: Iterable[AdvisoryRecord],
    reopen: _Entry,
    new_id: str,
    revision: RevisionRecord,
    hub: str,
    web: str,
) -> None:
    """Make `related` symmetric: the reverted update advisory points at the record that undid it,
    and each of its changes `reopen` puts back is marked `undone_in` (so its text can say when
    only part of the update was undone)."""
    fix_id = reopen.reverts or ""
    for i, record in enumerate(results):
        if record.id == fix_id:
            break
    else:
        found = [r for r in earlier if r.id == fix_id]
        if not found:
            return
        record = found[0]
        results.append(record)
        i = len(results) - 1
    osv = copy.deepcopy(record.osv)
    related = set(osv.get("related", []))
    marked = False
    for item in osv["database_specific"].get("changes", []):
        if not item.get("undone_in") and undoes(reopen.change, item):
            item["undone_in"] = revision.sha
            marked = True
    if new_id in related and not marked:
        return
    osv["related"] = sorted(related | {new_id})
    osv["database_specific"]["reverted_by"] = revision.sha
    osv["details"] = render_details(record.repo, osv["database_specific"], record.repo.url(hub), web)
    moment = _bump(osv, revision)
    results[i] = AdvisoryRecord(record.id, record.repo, record.revision_sha, osv, moment, record.withdrawn)
