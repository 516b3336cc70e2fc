"""Derivatives: a base's derivatives found through the hub's listing and kept watched, and what each
derivative inherits of the base's advisories (hubwatch.advisories.inherit), saved like any other.

- `watch_with_derivatives`: `hubwatch watch add ORG/NAME --derivatives`: the base, and every model the hub
  lists under `base_model:<relation>:ORG/NAME`, watched; each derivative's base recorded in the store.
- `refresh_derivatives`: the same listing read again for each base whose last reading is older
  than `HUBWATCH_DERIVATIVES_REFRESH_S` (`hubwatch run` does it after its poll cycles), so new
  derivatives are picked up.
- `poll_now_with_derivatives`: a webhook's immediate poll of one repo, then the derivatives pass for it (a
  derivative) or for its derivatives (a base).
- `check_inheritance`: for each derivative whose head or whose base's advisories moved since it was
  last checked, each of the base's advisories about copied files planned against the derivative's
  stored files; inherited advisories upserted through the store's one advisory path (so /v1/query,
  feeds and pages see them), notes (matches / own / stale) kept on the derivative.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache, partial
from typing import TYPE_CHECKING, Any

from hubwatch.advisories.inherit import (
    INHERITED_ID_SUFFIX,
    Inherited,
    carries,
    inheritable,
    is_inherited,
    plan_inherited,
    renamed_inherited,
    withdraw_inherited,
)
from hubwatch.domain.clock import Clock, system_clock
from hubwatch.domain.records import AdvisoryRecord, RepoId
from hubwatch.domain.snapshot import Snapshot
from hubwatch.storage.derivatives.derivatives import RELATIONS, Derivatives, Derivative
from hubwatch.tracker.pipeline import load_baseline

if TYPE_CHECKING:
    from hubwatch.settings import Settings
    from hubwatch.storage import Store
    from hubwatch.tracker.hub_client import HubClient
    from hubwatch.tracker.poller import PollOutcome

__all__ = [
    "DerivativesCheck",
    "DerivativesJob",
    "after_poll",
    "check_inheritance",
    "derivatives",
    "poll_now_with_derivatives",
    "refresh_derivatives",
    "report_lines",
    "watch_with_derivatives",
]

log = logging.getLogger(__name__)


def derivatives(store: Store, clock: Clock = system_clock) -> Derivatives:
    """The store's derivatives queries."""
    return store.derivatives(clock)


def watch_with_derivatives(
    store: Store, hub: HubClient, base: RepoId, relations: Sequence[str] = (), limit: int | None = None,
    clock: Clock = system_clock,
) -> list[tuple[RepoId, str]]:  # fmt: skip
    """Watch `base` and its derivatives (the relations given, default all; at most `limit`) as the
    hub lists them now; the derivatives found, with their relation."""
    fam = derivatives(store, clock)
    fam.set_root(base, relations, limit)
    found = hub.derivatives(base, list(relations) or list(RELATIONS), limit=limit)
    fam.add_members(base, found)
    return found


def refresh_derivatives(
    store: Store, hub: HubClient, settings: Settings, clock: Clock = system_clock, *, force: bool = False
) -> dict[RepoId, list[RepoId]]:
    """Read the listing again for each base due (or all, with `force`); the new derivatives per base."""
    fam = derivatives(store, clock)
    now = clock()
    due = timedelta(seconds=settings.derivatives_refresh_s)
    added: dict[RepoId, list[RepoId]] = {}
    for root in fam.roots():
        if not force and root.refreshed_at is not None and now - root.refreshed_at < due:
            continue
        state = store.repo_state(root.repo)
        if state is None or not state.watched:
            continue  # the base itself is no longer watched: its derivatives are not followed
        found = hub.derivatives(root.repo, list(root.relations) or list(RELATIONS), limit=root.max_derivatives)
        new = fam.add_members(root.repo, found)
        if new:
            added[root.repo] = new
    return added


@dataclass(frozen=True)
class DerivativesCheck:
    """One base advisory checked against one derivative."""

    repo: RepoId
    base: RepoId
    upstream: str
    result: Inherited


@dataclass
class _Snapshots:
    """What one pass over the derivatives reads of a base once, for all its derivatives: snapshots, and
    the base's inheritable records."""

    store: Store
    cache: dict[tuple[RepoId, str | None], Snapshot] = field(default_factory=dict)
    records: dict[RepoId, list[AdvisoryRecord]] = field(default_factory=dict)

    def at(self, repo: RepoId, sha: str | None) -> Snapshot:
        key = (repo, sha)
        if key not in self.cache:
            self.cache[key] = load_baseline(self.store, repo, sha).snapshot
        return self.cache[key]

    def inheritable(self, base: RepoId) -> list[AdvisoryRecord]:
        if base not in self.records:
            self.records[base] = [r for r in self.store.advisories.records(base) if inheritable(r)]
        return self.records[base]


def _fingerprint(store: Store, member: Derivative, head: str) -> str:
    """What a check of `member` at `head` depends on, read without decoding a record: the
    derivative's id and head, and the base's history version (raised by every write to its
    revisions or advisories, `Store.summary`): one row, however deep the base's history."""
    base = store.summary(member.base)
    return f"{member.repo}@{head}|{member.base}#" + ("none" if base is None else f"{base.repo_id}:{base.version}")


def _carried_since(
    snaps: _Snapshots, member: Derivative, line: Callable[[], Sequence[str]], record: AdvisoryRecord, before: Snapshot,
    after: Snapshot,
) -> str:  # fmt: skip
    """The oldest revision of the unbroken run up to the head that carries the stale content."""
    shas = line()
    since = shas[-1]
    for sha in reversed(shas[:-1]):
        if not carries(record, before, after, snaps.at(member.repo, sha)):
            break
        since = sha
    return since


def _check_member(
    store: Store, fam: Derivatives, snaps: _Snapshots, member: Derivative, settings: Settings, force: bool,
    now: datetime,
) -> list[DerivativesCheck]:  # fmt: skip
    head = store.head(member.repo)
    if head is None:
        return []  # not polled yet: checked once its history is stored
    fingerprint = _fingerprint(store, member, head.sha)  # a rename checks again
    if not force and member.notes.get("_checked") == fingerprint:
        return []
    base_records = snaps.inheritable(member.base)

    @cache
    def line() -> list[str]:  # the derivative's main line up to its head: read only if a record is raised
        shas = store.revisions.revision_shas(member.repo) or [head.sha]
        return shas if shas[-1] == head.sha else [*shas, head.sha]

    prior = {
        str(r.osv["database_specific"]["inherited"]["upstream"]): r
        for r in store.advisories.with_id_suffix(member.repo, INHERITED_ID_SUFFIX, withdrawn=True)
        if is_inherited(r.osv)
    }
    renamed: dict[str, AdvisoryRecord] = {}  # after a rename upstream: the records under the current id
    for upstream, record in list(prior.items()):
        moved = renamed_inherited(record, member.repo, now)
        if moved is not None:
            prior[upstream] = renamed[moved.id] = moved
    snapshot = snaps.at(member.repo, head.sha)
    checks: list[DerivativesCheck] = []
    records: list[AdvisoryRecord] = []
    notes: dict[str, Any] = {"_checked": fingerprint}
    for record in base_records:
        parent = record.osv["database_specific"].get("parent")
        before = snaps.at(member.base, parent if isinstance(parent, str) else None)
        after = snaps.at(member.base, record.revision_sha)
        result = plan_inherited(
            derivative=member.repo, relation=member.relation, head=head, snapshot=snapshot,
            carried_since=partial(_carried_since, snaps, member, line, record, before, after),
            base_record=record, before=before, after=after, prior=prior.get(record.id), settings=settings,
            id_repo=store.first_id(member.repo),
        )  # fmt: skip
        if result.record is not None:
            records.append(result.record)
        notes[record.id] = {"status": result.status, "note": result.note, "sha": head.sha}
        checks.append(DerivativesCheck(member.repo, member.base, record.id, result))
    live = {r.id for r in base_records}
    for upstream, stale in sorted(prior.items()):
        if upstream not in live and stale.withdrawn is None:  # the base's record was withdrawn
            records.append(withdraw_inherited(stale, now))
            notes.pop(upstream, None)
    planned = {r.id for r in records}
    records += [r for r in renamed.values() if r.id not in planned]
    if records:
        store.revisions.replace_derived(member.repo, {}, records)
    fam.set_notes(member.repo, notes)
    return checks


def check_inheritance(
    store: Store, settings: Settings, clock: Clock = system_clock, *, force: bool = False,
    repos: Sequence[RepoId] | None = None,
) -> list[DerivativesCheck]:  # fmt: skip
    """Check every derivative (or those in `repos`) whose head or base advisories moved since it was
    last checked (all of them with `force`); what was found, per derivative and base advisory."""
    fam = derivatives(store, clock)
    snaps = _Snapshots(store)
    wanted = None if repos is None else set(repos)
    checks: list[DerivativesCheck] = []
    for member in fam.members():
        if wanted is None or member.repo in wanted:
            checks += _check_member(store, fam, snaps, member, settings, force, clock())
    return checks


def after_poll(store: Store, hub: HubClient, settings: Settings, clock: Clock = system_clock) -> list[DerivativesCheck]:
    """What `hubwatch poll` and each cycle of `hubwatch run` do after polling: the families due
    refreshed, inheritance checked; nothing at all while no base is watched with its derivatives."""
    if not derivatives(store, clock).roots():
        return []
    refresh_derivatives(store, hub, settings, clock)
    return check_inheritance(store, settings, clock)


def poll_now_with_derivatives(
    poll_now: Callable[[RepoId], PollOutcome | None], store: Store, settings: Settings, repo: RepoId,
    clock: Clock = system_clock,
) -> PollOutcome | None:  # fmt: skip
    """What a hub webhook for `repo` triggers in `hubwatch run`: its immediate poll (`poll_now`,
    the poll cycle's), then inheritance checked for `repo` when it is a derivative, for its
    derivatives when it is a base (a failure there is logged; the next cycle's pass tries again)."""
    outcome = poll_now(repo)
    if outcome is None:
        return None  # not watched, or another worker polls it (its cycle runs the derivatives pass)
    current = outcome.repo  # the hub's id, after a rename
    try:
        fam = derivatives(store, clock)
        wanted = [m.repo for m in fam.members(base=current)]
        if fam.member(current) is not None:
            wanted.append(current)
        if wanted:
            for line in report_lines(check_inheritance(store, settings, clock, repos=wanted)):
                log.info("%s", line)
    except Exception:  # noqa: BLE001 - the webhook's poll is stored; the derivatives pass is retried later
        log.exception("inheritance check after the webhook for %s failed; retried after the next poll cycle", current)
    return outcome


def report_lines(checks: Sequence[DerivativesCheck]) -> list[str]:
    """One line per inherited advisory raised or closed, and per note of a template of its own."""
    lines: list[str] = []
    for check in checks:
        record, status = check.result.record, check.result.status
        if record is not None and status == "stale":
            lines.append(f"{check.repo}: inherited advisory {record.id}: {check.result.note}")
        elif record is not None:
            lines.append(f"{check.repo}: inherited advisory {record.id} closed ({check.result.note})")
        elif status == "own":
            lines.append(f"{check.repo}: note: {check.result.note}")
    return lines


class DerivativesJob:
    """The scheduled job of `hubwatch run`: the poll cycle, then the derivatives due refreshed and
    inheritance checked (a failure there is logged; the next cycle tries again)."""

    def __init__(self, cycle: Callable[[], object], store: Store, hub: HubClient, settings: Settings,
                 clock: Clock = system_clock) -> None:  # fmt: skip
        self.cycle = cycle
        self.store = store
        self.hub = hub
        self.settings = settings
        self.clock = clock

    def __call__(self) -> object:
        outcome = self.cycle()
        try:
            for line in report_lines(after_poll(self.store, self.hub, self.settings, self.clock)):
                log.info("%s", line)
        except Exception:  # noqa: BLE001 - a derivatives pass must not stop the poll schedule
            log.exception("derivatives refresh / inheritance check failed; retried after the next poll cycle")
        return outcome
