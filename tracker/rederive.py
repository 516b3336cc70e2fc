"""Re-derives a store's changes and advisories when the advisory model changes (docs/advisories.md).

Each stored revision is diffed again against its parent from the stored snapshots (file listing,
tracked contents, safetensors headers: every revision's blobs are kept), the estimate moves are
taken from the stored estimates, and the advisories are planned again in history order. The new
records are reconciled with the published ones (`hubwatch.advisories.reconcile`): unchanged ones
are left alone, changed ones updated, ones the new model no longer derives withdrawn. One
transaction per repo; the store records the model once every repo is done, so an interrupted run
simply runs again (it is idempotent: a second run writes nothing).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from hubwatch.advisories.reconcile import ADVISORY_MODEL, reconcile, renamed_withdrawn
from hubwatch.domain.clock import Clock, system_clock
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, Direction, FileRecord, RepoId
from hubwatch.domain.snapshot import Snapshot
from hubwatch.tracker.estimating import estimate_change
from hubwatch.tracker.rewound import settle_off_main_line
from hubwatch.tracker.pipeline import Baseline, empty_snapshot, history_rewrite_change, load_baseline

if TYPE_CHECKING:
    from hubwatch.settings import Settings
    from hubwatch.storage import Store

__all__ = ["MODEL_KEY", "RederiveResult", "rederive_if_needed", "rederive_repo", "same_changes"]

log = logging.getLogger(__name__)

MODEL_KEY = "advisory_model"


class RederiveResult:
    """What re-deriving one repo wrote: revisions whose changes were replaced, records upserted."""

    def __init__(self, revisions: int, records: list[AdvisoryRecord]) -> None:
        self.revisions = revisions
        self.records = records

    @property
    def withdrawn(self) -> int:
        return sum(1 for r in self.records if r.withdrawn is not None)


def same_changes(a: list[ChangeRecord], b: list[ChangeRecord]) -> bool:
    """Whether two lists of changes say the same, in the same order (what re-deriving compares)."""
    def key(c: ChangeRecord) -> tuple[object, ...]:
        return (c.kind, c.severity, c.path, c.summary, Direction.parse(c.direction), repr(sorted(c.detail.items(), key=str)))

    return [key(c) for c in a] == [key(c) for c in b]


def rederive_repo(
    store: Store, repo: RepoId, settings: Settings, clock: Clock = system_clock,
    adding: Mapping[str, tuple[FileRecord, bytes]] | None = None,
) -> RederiveResult:
    """Re-derive one repo's changes and advisories from its stored history; write the differences.
    `adding` (sha → a derived file and its content, e.g. a dataset head's late parquet conversion):
    files the stored revisions are re-derived with, added to them in the same transaction."""
    extra = dict(adding or {})

    def load(sha: str | None) -> Baseline:
        found = load_baseline(store, repo, sha)
        if sha is None or sha not in extra:
            return found
        record, content = extra[sha]
        snapshot = found.snapshot
        files, contents = {**snapshot.files, record.path: record}, {**snapshot.contents, record.path: content}
        return Baseline(Snapshot(snapshot.sha, files, contents, snapshot.safetensors), found.estimate)

    from hubwatch.advisories.advise import plan_advisories
    from hubwatch.advisories.standing import standing
    from hubwatch.diff import diff_repo_snapshots

    derived: dict[str, AdvisoryRecord] = {}
    # Each force-push's old head, by the revisions it dropped (what its rewrite change names).
    old_heads = {tuple(r.dropped): r.old_head for r in store.revisions.rewrites(repo)}
    origin = store.first_id(repo)
    replaced: dict[str, list[ChangeRecord]] = {}
    cache: Baseline | None = None
    for entry in store.history(repo):
        revision = entry.revision
        if revision.parent is None:
            base = Baseline(empty_snapshot(), None)
        elif cache is not None and cache.snapshot.sha == revision.parent:
            base = cache
        else:
            base = load(revision.parent)
        current = load(revision.sha)
        initial = not base.snapshot.files
        rewrite = [c for c in entry.changes if c.detail.get("history_rewrite")]
        carried: list[AdvisoryRecord] | None = None
        old_head = old_heads.get(tuple(rewrite[0].detail.get("old") or ())) if rewrite and initial else None
        if old_head is not None and (old := load(old_head)).snapshot.files:
            # As the poll did: a rewritten commit without a stored parent (a squash) is compared with
            # the old head, and carries the hazards open there that it does not clear.
            base, initial = old, False
            line = store.revisions.revision_shas(repo, tip=old_head) or [old_head]
            carried = list(standing(line, list(derived.values()), old_head).carries)
        changes = [history_rewrite_change(list(c.detail.get("old") or [])) for c in rewrite]
        changes += diff_repo_snapshots(repo.repo_type, None if initial else base.snapshot, current.snapshot)
        moved = estimate_change(base.estimate, current.estimate)
        if moved is not None:
            changes.append(moved)
        # A first stored revision (initial) is planned too: what it carries is a baseline hazard.
        for record in plan_advisories(repo, revision, changes, list(derived.values()), settings, id_repo=origin,
                                      carried=carried):
            derived[record.id] = record
        if not same_changes(changes, entry.changes):
            replaced[revision.sha] = changes
        cache = current
    published = store.advisories.records(repo)
    now = clock()
    records = reconcile(published, list(derived.values()), now)
    # After a rename the withdrawn records (reconcile leaves them alone) still name the old id.
    records += renamed_withdrawn(published, store.canonical_id(repo) or repo, now)
    if replaced or records or extra:
        store.revisions.replace_derived(repo, replaced, records, extra)
    # Updates raised at commits a force-push dropped are withdrawn (and those back on the line published).
    records += settle_off_main_line(store, repo, now)
    return RederiveResult(len(replaced), records)


def rederive_if_needed(store: Store, settings: Settings, clock: Clock = system_clock) -> int:
    """Re-derive every watched repo when the store's records predate ADVISORY_MODEL; the number of
    repos whose records changed (0 when the store is current)."""
    if store.meta(MODEL_KEY) == str(ADVISORY_MODEL):
        return 0
    touched = 0
    for state in store.repos.watched():
        result = rederive_repo(store, state.repo, settings, clock)
        if result.revisions or result.records:
            touched += 1
            log.info("%s: re-derived with advisory model %d: %d revisions re-classified, %d records "
                     "written (%d withdrawn)", state.repo, ADVISORY_MODEL, result.revisions,
                     len(result.records), result.withdrawn)  # fmt: skip
    store.set_meta(MODEL_KEY, str(ADVISORY_MODEL))
    return touched
