"""Inherited advisories (pure): what a base model's advisory means for a derivative that copied its files.

Fine-tunes, quantisations, adapters and merges copy the base's tokenizer files, special tokens, chat
template and generation defaults when they are made. When the base advises a change of one of
those (an update: it fixed something; a hazard: it broke something), each derivative is compared
with the base before and after that commit, item by item (the template in effect by name, or the
file's key, or the whole file):

- the derivative holds the content the base left behind (an update's before, a hazard's after):
  *stale* — it gets an advisory of its own, a hazard from the revision it started carrying it,
  naming the base's record in `upstream` and `related` (OSV 1.7), with the rendered difference
  between its prompts and the base's fixed ones (rendered only in the diff engine's sandbox);
- it holds the base's good content: *matches* — nothing;
- it holds something else: *own* — an info note, never an advisory;
- it holds no such file or template: *absent* — nothing.

An open inherited advisory closes (a `fixed` event at the derivative's revision) once the
derivative stops carrying the stale content.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hubwatch.advisories.advise_match import direction_of, is_fixed, jsonable
from hubwatch.advisories.advise_text import clean_line
from hubwatch.advisories.osv import (
    OSV_SCHEMA_VERSION,
    check_prefix,
    parse_osv_timestamp,
    validate_osv,
)
from hubwatch.diff.templates import diff_templates, template_sources
from hubwatch.diff.text import diff_text
from hubwatch.domain.records import AdvisoryRecord, Direction, Kind, RepoId, RevisionRecord, Severity
from hubwatch.domain.remote_data import load_remote_json
from hubwatch.domain.snapshot import Snapshot
from hubwatch.domain.times import rfc3339
from hubwatch.settings import DEFAULT_HUB, Settings

__all__ = [
    "INHERITED_ID_SUFFIX",
    "INHERITED_KINDS",
    "Inherited",
    "carries",
    "classify",
    "inheritable",
    "inherited_id",
    "is_inherited",
    "plan_inherited",
    "renamed_inherited",
    "withdraw_inherited",
]

# The file kinds a derivative copies from its base.
INHERITED_KINDS = frozenset({Kind.CHAT_TEMPLATE.value, Kind.SPECIAL_TOKENS.value, Kind.TOKENIZER.value,
                             Kind.GENERATION_DEFAULTS.value})  # fmt: skip
_WORDS = {
    "chat_template": "chat template",
    "special_tokens": "special tokens",
    "tokenizer": "tokenizer",
    "generation_defaults": "generation defaults",
}
_MISSING = object()


@dataclass(frozen=True)
class Inherited:
    """What one base advisory means for one derivative: the status, a one-line note, and the
    record to upsert (a new inherited advisory, or the open one closed); None: nothing to write."""

    status: str  # stale | matches | own | absent
    note: str
    record: AdvisoryRecord | None


def is_inherited(osv: Mapping[str, Any]) -> bool:
    """Whether a record is an inherited advisory (raised on a derivative for its base's advisory)."""
    ds = osv.get("database_specific")
    return isinstance(ds, Mapping) and isinstance(ds.get("inherited"), Mapping)


def _items(record: AdvisoryRecord) -> list[dict[str, Any]]:
    ds = record.osv.get("database_specific")
    changes = ds.get("changes") if isinstance(ds, Mapping) else None
    return [c for c in changes or () if isinstance(c, dict) and c.get("kind") in INHERITED_KINDS]


def inheritable(record: AdvisoryRecord) -> bool:
    """A live update or hazard advisory of the base (not itself inherited) about copied files."""
    return (
        record.withdrawn is None
        and not is_inherited(record.osv)
        and direction_of(record.osv) in (Direction.UPDATE, Direction.HAZARD)
        and bool(_items(record))
    )


def _template(snapshot: Snapshot, name: str) -> str | None:
    found = [s for s in template_sources(snapshot) if s.name == name]
    return min(found, key=lambda s: s.rank).text if found else None


def _lookup(doc: Any, key: str) -> Any:
    if isinstance(doc, dict) and key in doc:
        return doc[key]
    head, dot, rest = key.partition(".")
    if dot and isinstance(doc, dict) and head in doc:
        return _lookup(doc[head], rest)
    return None


def _value(snapshot: Snapshot, item: Mapping[str, Any]) -> Any:
    """What the derivative (or the base at a revision) holds for one advised item; _MISSING when
    it holds no such file or template."""
    detail = item.get("detail") if isinstance(item.get("detail"), Mapping) else {}
    assert isinstance(detail, Mapping)
    if item.get("kind") == Kind.CHAT_TEMPLATE.value:
        text = _template(snapshot, str(detail.get("template") or "default"))
        return _MISSING if text is None else text
    file = str(detail.get("file") or str(item.get("path", "")).partition(":")[0])
    raw = snapshot.contents.get(file)
    if raw is None:
        return _MISSING
    key = detail.get("key")
    if isinstance(key, str) and key and file.endswith(".json"):
        try:
            return jsonable(_lookup(load_remote_json(raw), key))
        except ValueError:
            return _MISSING
    return hashlib.sha256(raw).hexdigest()


def _bad_good(record: AdvisoryRecord, before: Snapshot, after: Snapshot, item: Mapping[str, Any]) -> tuple[Any, Any]:
    old, new = _value(before, item), _value(after, item)
    return (old, new) if direction_of(record.osv) is Direction.UPDATE else (new, old)


def classify(record: AdvisoryRecord, before: Snapshot, after: Snapshot, snapshot: Snapshot) -> list[tuple[dict[str, Any], str]]:
    """Each copied-file item of the base's record with the derivative's status for it."""
    out: list[tuple[dict[str, Any], str]] = []
    for item in _items(record):
        bad, good = _bad_good(record, before, after, item)
        mine = _value(snapshot, item)
        if mine is _MISSING or bad is _MISSING and good is _MISSING or bad == good:
            status = "absent"
        elif mine == bad:
            status = "stale"
        elif mine == good:
            status = "matches"
        else:
            status = "own"
        out.append((item, status))
    return out


def carries(record: AdvisoryRecord, before: Snapshot, after: Snapshot, snapshot: Snapshot) -> bool:
    """Whether a revision (its snapshot) carries any of the content the base's record left behind."""
    return any(status == "stale" for _, status in classify(record, before, after, snapshot))


# Every inherited advisory's id ends so (`inherited_id`): the store finds them by id alone.
INHERITED_ID_SUFFIX = "-inherited"


def inherited_id(prefix: str, derivative: RepoId, upstream_id: str, year: int) -> str:
    """`<prefix>-<YYYY>-<12 hex of sha256("org/name<upstream id")>-inherited`: one per derivative and base record."""
    digest = hashlib.sha256(f"{derivative}<{upstream_id}".encode()).hexdigest()[:12]
    return f"{check_prefix(prefix)}-{year:04d}-{digest}{INHERITED_ID_SUFFIX}"


def _what(items: Sequence[Mapping[str, Any]]) -> str:
    words = list(dict.fromkeys(_WORDS.get(str(i.get("kind")), str(i.get("kind"))) for i in items))
    return " and ".join(words)


def _rendered(item: Mapping[str, Any], snapshot: Snapshot, good: Snapshot) -> dict[str, Any]:
    """The difference between the derivative's content and the base's good one: for a chat template
    the prompts both render (in the sandbox) and the template text, else the values as JSON."""
    detail = item.get("detail") if isinstance(item.get("detail"), Mapping) else {}
    assert isinstance(detail, Mapping)
    if item.get("kind") == Kind.CHAT_TEMPLATE.value:
        name = str(detail.get("template") or "default")
        for change in diff_templates(snapshot, good):
            if change.kind is Kind.CHAT_TEMPLATE and change.detail.get("template") == name:
                return {
                    "rendered_diff": jsonable(change.detail.get("rendered_diff") or {}),
                    "text_diff": str(change.detail.get("text_diff") or ""),
                }
        return {}
    mine, theirs = _value(snapshot, item), _value(good, item)
    return {"text_diff": diff_text(_dump(mine), _dump(theirs), old_name="derivative", new_name="base")}


def _dump(value: Any) -> str:
    return "" if value is _MISSING else json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def _details(ds: Mapping[str, Any], entries: Sequence[Mapping[str, Any]], hub: str, web: str) -> str:
    inh = ds["inherited"]
    base, derivative = RepoId.parse(inh["base"]), RepoId.parse(str(ds["repo"]))
    base_sha, since = str(inh["base_commit"]), str(inh["carried_since"])
    verb = "fixed" if inh["base_direction"] == Direction.UPDATE.value else "flagged as a hazard"
    lines = [
        f"**{derivative}** (a {inh['relation']} of **{base}**) carries the {_what(entries)} that {base} {verb} at "
        f"[`{base_sha[:12]}`]({base.url(hub)}/commit/{base_sha}) (advisory `{inh['upstream']}`): "
        f"its revisions from `{since[:12]}` hold the content {base} had "
        + ("before that commit." if inh["base_direction"] == Direction.UPDATE.value else "from that commit on."),
        "",
    ]
    for entry in entries:
        lines.append(f"- **{entry['severity']}** `{clean_line(entry['path'], 120).replace('`', '')}`: {clean_line(entry['summary'])}")
        detail = entry.get("detail", {})
        for conv, diff in sorted((detail.get("rendered_diff") or {}).items()):
            text = diff.get("diff") if isinstance(diff, Mapping) else None
            if text:
                lines += ["", f"Rendered prompt, {clean_line(conv, 60)} (derivative → {base}'s):", "", "```diff",
                          str(text).replace("```", "'''"), "```"]  # fmt: skip
        if not detail.get("rendered_diff") and detail.get("text_diff"):
            lines += ["", "```diff", str(detail["text_diff"]).replace("```", "'''"), "```"]
    lines.append("")
    if ds.get("fixed_by"):
        lines.append(f"**Closed.** `{str(ds['fixed_by'])[:12]}` of {derivative} no longer carries it.")
    else:
        lines.append(f"No fixed revision of {derivative} yet; {base} fixed it at `{base_sha[:12]}`: take its "
                     f"{_what(entries)} (or pin {base} itself).")  # fmt: skip
    lines += ["", f"Derivatives: {web}/models/{base.org}/{base.name}/derivatives"]
    return "\n".join(lines)


def _bump_past(osv: dict[str, Any], revision: RevisionRecord) -> None:
    before = parse_osv_timestamp(osv["modified"])
    moment = parse_osv_timestamp(rfc3339(revision.date, f"date of revision {revision.sha}"))
    osv["modified"] = rfc3339(moment if moment > before else before + timedelta(seconds=1))


def _close(prior: AdvisoryRecord, head: RevisionRecord, status: str, hub: str, web: str) -> AdvisoryRecord:
    osv = copy.deepcopy(prior.osv)
    ds = osv["database_specific"]
    for affected in osv["affected"]:
        for rng in affected["ranges"]:
            if not any("fixed" in ev for ev in rng["events"]):
                rng["events"].append({"fixed": head.sha})
    ds["fixed_by"] = head.sha
    ds["inherited"]["status"] = status
    for entry in ds["changes"]:
        entry["reverted_by"] = head.sha
    osv["references"].append({"type": "FIX", "url": f"{prior.repo.url(hub)}/commit/{head.sha}"})
    osv["details"] = _details(ds, ds["changes"], hub, web)
    _bump_past(osv, head)
    validate_osv(osv)
    return AdvisoryRecord(prior.id, prior.repo, prior.revision_sha, osv, parse_osv_timestamp(osv["modified"]))


def renamed_inherited(record: AdvisoryRecord, repo: RepoId, now: datetime) -> AdvisoryRecord | None:
    """The inherited record under the derivative's current id `repo` after a rename upstream (as the
    repo's own advisories are republished, tracker.poller): its package, range, references, text and
    `database_specific.repo` name `repo`; id, events and state kept; `modified` at `now` in whole
    seconds, strictly later than before (so mirrors fetch it again). None when it names `repo` already."""
    old = str(record.osv.get("database_specific", {}).get("repo", record.repo))
    if old == str(repo):
        return None
    # the old id as a whole name (not inside a longer one, e.g. the base's), bare or in a URL
    pattern = re.compile(r"(?<![\w.-])" + re.escape(old) + r"(?![\w.-])", re.IGNORECASE)
    osv = json.loads(pattern.sub(lambda _m: str(repo), json.dumps(record.osv)))
    osv["upstream"], osv["related"] = record.osv["upstream"], record.osv["related"]  # the base's ids, as they were
    moment = now.replace(microsecond=0)
    moment = moment if moment > record.modified else record.modified + timedelta(seconds=1)
    osv["modified"] = rfc3339(moment)
    validate_osv(osv)
    return AdvisoryRecord(record.id, repo, record.revision_sha, osv, moment, withdrawn=record.withdrawn)


def withdraw_inherited(record: AdvisoryRecord, now: datetime) -> AdvisoryRecord:
    """The inherited record withdrawn (its base's record was withdrawn, so it names nothing live):
    `withdrawn` and `modified` at `now` in whole seconds, strictly later than before; content kept."""
    moment = now.replace(microsecond=0)
    moment = moment if moment > record.modified else record.modified + timedelta(seconds=1)
    osv = {**copy.deepcopy(record.osv), "modified": rfc3339(moment)}
    return AdvisoryRecord(record.id, record.repo, record.revision_sha, osv, moment, withdrawn=moment)


def plan_inherited(
    *,
    derivative: RepoId,
    relation: str,
    head: RevisionRecord,
    snapshot: Snapshot,
    carried_since: Callable[[], str],
    base_record: AdvisoryRecord,
    before: Snapshot,
    after: Snapshot,
    prior: AdvisoryRecord | None,
    settings: Settings,
    hub_url: str = DEFAULT_HUB,
    web_url: str | None = None,
    id_repo: RepoId | None = None,
) -> Inherited:
    """What `base_record` (the base's advisory; `before`/`after`: the base at its parent and at its
    commit) means for `derivative` at `head` (`snapshot`: its files there; `carried_since`: finds
    the oldest revision of the unbroken run up to `head` carrying the stale content, asked only when
    a record is raised: a walk back through the derivative's history that a check of a record
    raised before, or of content not stale, does not need). `prior`: the
    inherited record raised before, if any. Pure and deterministic: the same inputs give the same
    record, so running it again writes nothing new."""
    web = (web_url if web_url is not None else settings.public_url).rstrip("/")
    base, base_sha = base_record.repo, base_record.revision_sha
    good = after if direction_of(base_record.osv) is Direction.UPDATE else before
    verb = "fixed" if direction_of(base_record.osv) is Direction.UPDATE else "flagged"
    statuses = classify(base_record, before, after, snapshot)
    stale = [item for item, status in statuses if status == "stale"]
    final = "stale" if stale else next((s for s in ("own", "matches") if any(st == s for _, st in statuses)), "absent")
    what = _what([i for i, _ in statuses]) or "files"
    if not stale:
        closed = None
        if prior is not None and prior.withdrawn is None and not is_fixed(prior.osv):
            closed = _close(prior, head, final, hub_url, web)
        note = {
            "own": f"{derivative} has a {what} of its own, neither {base}'s before nor after {base_sha[:12]}: "
                   f"not advised; compare it with the base's fix",
            "matches": f"{derivative} already carries the {what} {base} {verb} at {base_sha[:12]}",
            "absent": f"{derivative} holds no {what} of its own (it uses {base}'s)",
        }[final]  # fmt: skip
        return Inherited(final, note, closed)
    note = f"{derivative} still carries the {_what(stale)} that {base} {verb} at {base_sha[:12]}"
    if prior is not None:
        return Inherited("stale", note, None)  # raised already: open, or closed and stale again (kept as closed)
    since = carried_since()
    severity = max((Severity(str(i.get("severity", "low"))) for i in stale), key=lambda s: s.rank)
    entries: list[dict[str, Any]] = []
    for item in stale:
        detail = item.get("detail") if isinstance(item.get("detail"), Mapping) else {}
        assert isinstance(detail, Mapping)
        file, key = detail.get("file"), detail.get("key")
        entries.append({
            "kind": item["kind"],
            "severity": item.get("severity", "low"),
            "path": str(item.get("path") or file or ""),
            "summary": f"still carries the {_what([item])} that {base} {verb} at {base_sha[:12]}",
            "direction": Direction.HAZARD.value,
            "detail": {
                "file": file, "key": key, **({"template": detail["template"]} if "template" in detail else {}),
                # a hazard key no change of the derivative clears: only the derivatives check closes it
                "hazards": [f"inherited:{base_record.id}:{item.get('path')}"],
                "upstream": base_record.id,
                **_rendered(item, snapshot, good),
            },
        })  # fmt: skip
    stamp_at = max(parse_osv_timestamp(base_record.osv["published"]), parse_osv_timestamp(rfc3339(head.date)))
    stamp = rfc3339(stamp_at)
    repo_url = derivative.url(hub_url)
    ds: dict[str, Any] = {
        "source": "hubwatch",
        "repo": str(derivative),
        "commit": since,
        "parent": None,
        "commit_title": f"inherited from {base}",
        "direction": Direction.HAZARD.value,
        "kinds": sorted({e["kind"] for e in entries}),
        "max_severity": severity.value,
        "changes": entries,
        "inherited": {
            "upstream": base_record.id,
            "base": str(base),
            "base_commit": base_sha,
            "base_direction": (direction_of(base_record.osv) or Direction.UPDATE).value,
            "relation": relation,
            "carried_since": since,
            "status": "stale",
        },
    }
    osv: dict[str, Any] = {
        "schema_version": OSV_SCHEMA_VERSION,
        "id": inherited_id(settings.advisory_prefix, id_repo or derivative, base_record.id, stamp_at.year),
        "modified": stamp,
        "published": stamp,
        "upstream": [base_record.id],
        "related": [base_record.id],
        "summary": clean_line(note, 200),
        "details": _details(ds, entries, hub_url, web),
        "affected": [
            {
                "package": {"ecosystem": "GIT", "name": repo_url},
                "ranges": [{"type": "GIT", "repo": repo_url, "events": [{"introduced": since}]}],
            }
        ],
        "references": [
            {"type": "ADVISORY", "url": f"{web}/advisories/{base_record.id}"},
            {"type": "FIX", "url": f"{base.url(hub_url)}/commit/{base_sha}"},
            {"type": "WEB", "url": f"{web}/models/{derivative.org}/{derivative.name}"},
        ],
        "database_specific": ds,
    }
    validate_osv(osv)
    return Inherited("stale", note, AdvisoryRecord(osv["id"], derivative, since, osv, stamp_at))
