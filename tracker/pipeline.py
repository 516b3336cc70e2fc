"""One revision through the flow: snapshot → diff → estimate → advise → save (one transaction)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hubwatch.domain.parsed_json import Memo, kept, parse_once
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, Direction, FileRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.tracker.estimating import estimate_change, estimate_with_inputs
from hubwatch.domain.snapshot import Snapshot

if TYPE_CHECKING:
    from hubwatch.estimator import Estimate
    from hubwatch.estimator.inputs import EstimatorInputs
    from hubwatch.settings import Settings
    from hubwatch.storage import Store
    from hubwatch.tracker.hub_client import HubClient

__all__ = [
    "Baseline",
    "ProcessedRevision",
    "empty_snapshot",
    "header_bytes",
    "history_rewrite_change",
    "load_baseline",
    "parse_header_bytes",
    "process_revision",
]


@dataclass(frozen=True)
class Baseline:
    """What a new revision is compared with: its parent's snapshot and estimate."""

    snapshot: Snapshot
    estimate: Estimate | None
    # The estimator's inputs as read from `snapshot` when the pipeline read them (the next
    # revision compares its own with them); None: read them again when needed.
    inputs: EstimatorInputs | None = None
    # The parses of `snapshot`'s JSON files (`parsed_json.Memo`) when the pipeline made them: the
    # next revision's diff and estimate read the files it shares with this one without parsing again.
    parsed: Memo | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ProcessedRevision:
    revision: RevisionRecord
    baseline: Baseline  # this revision as the baseline of the next one
    changes: tuple[ChangeRecord, ...]
    saved: bool  # False when another worker had stored it first
    advisories: tuple[AdvisoryRecord, ...] = ()  # what was upserted with it (new, and earlier ones updated)


def header_bytes(header: Mapping[str, Any]) -> bytes:
    """How a safetensors header is stored as the content of its `*.safetensors` path."""
    return json.dumps(header, sort_keys=True, separators=(",", ":")).encode()


def parse_header_bytes(raw: bytes) -> dict[str, Any]:
    """Inverse of `header_bytes`."""
    value = json.loads(raw)
    return value if isinstance(value, dict) else {}


def empty_snapshot(sha: str = "") -> Snapshot:
    """The baseline of a repo's first revision (or of one whose parent was never stored)."""
    return Snapshot(sha=sha, files={})


def load_baseline(store: Store, repo: RepoId, sha: str | None) -> Baseline:
    """Rebuild a stored revision's snapshot (listing, contents, safetensors headers) and estimate."""
    if sha is None:
        return Baseline(empty_snapshot(), None)
    entry = store.revision(repo, sha)
    if entry is None:
        return Baseline(empty_snapshot(sha), None)
    files, contents = store.revisions.snapshot_files(repo, sha)
    tracked: dict[str, bytes] = {}
    headers: dict[str, Mapping[str, Any]] = {}
    for path, raw in contents.items():
        if path.endswith(".safetensors"):
            headers[path] = parse_header_bytes(raw)
        else:
            tracked[path] = raw
    snapshot = Snapshot(sha=sha, files={f.path: f for f in files}, contents=tracked, safetensors=headers)
    from hubwatch.estimator import Estimate

    return Baseline(snapshot, Estimate.from_json(entry.estimate))  # the stored JSON, parsed once here


def history_rewrite_change(dropped: Sequence[str]) -> ChangeRecord:
    """A force-push: stored revisions that are no longer on the main branch.

    Recorded with the first new revision (and in the store's rewrites, which feeds and pages show)
    at info, so it is never advised: no OSV range can say "these revisions left the branch", and an
    update or hazard range at the new commit would mark revisions that never had the change.
    """
    short = ", ".join(s[:12] for s in dropped[:5]) + (" …" if len(dropped) > 5 else "")
    return ChangeRecord(
        kind=Kind.FILES,
        severity=Severity.INFO,
        path="",
        summary=f"history rewritten: {len(dropped)} earlier revision{'' if len(dropped) == 1 else 's'} no longer on the main branch ({short})",
        detail={"file": "", "key": None, "old": list(dropped), "new": None, "history_rewrite": True},
        direction=Direction.UPDATE,
    )


def _stored_contents(snapshot: Snapshot) -> dict[str, bytes]:
    # Safetensors headers are stored as the content of their `*.safetensors` path (never weights).
    contents = dict(snapshot.contents)
    for path, header in snapshot.safetensors.items():
        contents[path] = header_bytes(header)
    return contents


def _with_content_keys(snapshot: Snapshot, contents: Mapping[str, bytes]) -> list[FileRecord]:
    import hashlib

    out = []
    for path, record in sorted(snapshot.files.items()):
        raw = contents.get(path)
        digest = hashlib.sha256(raw).hexdigest() if raw is not None else None
        out.append(FileRecord(record.path, record.size, record.blob_id, record.lfs_sha256, digest))
    return out


def process_revision(
    repo: RepoId,
    revision: RevisionRecord,
    baseline: Baseline,
    *,
    hub: HubClient,
    store: Store,
    settings: Settings,
    extra_changes: Sequence[ChangeRecord] = (),
    snapshot: Snapshot | None = None,
    prior: Callable[[frozenset[tuple[str, str | None]]], Sequence[AdvisoryRecord]] | None = None,
    id_repo: RepoId | None = None,
) -> ProcessedRevision:
    """Snapshot, diff, estimate, advise and store one revision; raises HubError on hub failures.

    `snapshot`: the revision's snapshot when the caller fetched it already (the poller fetches
    the next revision while this one is processed); else it is fetched here. `prior`: given the
    (file, key) pairs of the revision's changes (`advise_match.change_keys`), at least the repo's
    records the revision may close or undo (the poller keeps those it read over a poll's
    revisions); else they are read from the store (`store.advisories.to_plan`). `id_repo`: the
    repo's first id when the caller holds it; else it is read from the store.
    """
    from hubwatch.advisories.advise import plan_advisories
    from hubwatch.advisories.advise_match import change_keys, direction_of
    from hubwatch.diff import diff_repo_snapshots

    # A revision compared with nothing (a repo's first, or the oldest kept by a backfill limit)
    # is the starting state: described at info (each record says the severity it would have had
    # as a change); only the hazards it carries are advised (a baseline hazard record).
    initial = not baseline.snapshot.files
    if snapshot is None:
        snapshot = hub.snapshot(repo, revision.sha, previous=baseline.snapshot)
    # Each JSON file parsed once for the diff and the estimate, and not again by the next revision
    # when it holds the same bytes (the memo keeps this revision's files only).
    parsed = {} if baseline.parsed is None else dict(baseline.parsed)
    with parse_once(parsed):
        old = None if initial else baseline.snapshot
        changes = list(extra_changes) + diff_repo_snapshots(repo.repo_type, old, snapshot)
        estimate, inputs = estimate_with_inputs(
            snapshot, None if initial else (baseline.snapshot, baseline.estimate), baseline.inputs
        )
    moved = estimate_change(baseline.estimate, estimate)
    if moved is not None:
        changes.append(moved)
    if initial:  # the baseline: only what it carries that would be a hazard as a change is advised
        advisories = plan_advisories(repo, revision, changes, [], settings,
                                     id_repo=store.first_id(repo) if id_repo is None else id_repo)
    else:
        pairs = frozenset().union(*(change_keys(c) for c in changes))
        known = store.advisories.to_plan(repo, pairs) if prior is None else prior(pairs)
        # Diffed against something other than its parent (a squashed history's commit, or a rewritten
        # one whose parent was never stored, is compared with the old head): only the hazards it adds
        # are advised, and those open at the old head that it does not clear still hold at it.
        carried = None if baseline.snapshot.sha == revision.parent else [
            r for r in store.advisories.affecting(repo, baseline.snapshot.sha)
            if r.withdrawn is None and direction_of(r.osv) is Direction.HAZARD]
        advisories = plan_advisories(repo, revision, changes, known, settings,
                                     id_repo=store.first_id(repo) if id_repo is None else id_repo, carried=carried)
    contents = _stored_contents(snapshot)
    saved = store.save_revision(
        repo,
        revision,
        _with_content_keys(snapshot, contents),
        contents,
        changes,
        None if estimate is None else (estimate.estimator_version or "", estimate.to_json()),
        advisories,
    )
    next_baseline = Baseline(snapshot, estimate, inputs, kept(parsed, snapshot.contents.values()))
    return ProcessedRevision(revision, next_baseline, tuple(changes), saved, tuple(advisories))
