"""The advisory side of a moved main line: updates raised at commits a force-push dropped are
withdrawn, and published again when upstream pushes them back (`hubwatch.advisories.rewound`).

The poller asks for the records before it records the rewrite or moves the head, and the store
writes both in one transaction, so a crash never leaves a rewound head whose pins "lack" an update
no revision upstream brings. A later head descending from a dropped commit (saved revision by
revision) and a re-derivation settle the records afterwards (`settle_off_main_line`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from hubwatch.advisories.rewound import off_main_line_updates
from hubwatch.domain.records import AdvisoryRecord, RepoId

if TYPE_CHECKING:
    from hubwatch.storage import Store

__all__ = ["after_head_move", "after_rewrite", "settle_off_main_line"]


def after_rewrite(store: Store, repo: RepoId, dropped: Iterable[str], now: datetime) -> list[AdvisoryRecord]:
    """The records to write with a force-push that leaves `dropped` (every stored commit upstream's
    history no longer holds) off the main line."""
    return off_main_line_updates(store.advisories.records(repo), dropped, now)


def after_head_move(store: Store, repo: RepoId, head: str, now: datetime) -> list[AdvisoryRecord]:
    """The records to write with moving the head to the stored commit `head` (upstream pushed dropped
    commits back): those it puts back on the main line are published again. Nothing is read past the
    off-line set when no force-push is recorded."""
    off = store.revisions.off_main_branch(repo)
    if not off:
        return []
    line = set(store.revisions.revision_shas(repo, head) or ())
    return off_main_line_updates(store.advisories.records(repo), off - line, now)


def settle_off_main_line(store: Store, repo: RepoId, now: datetime) -> list[AdvisoryRecord]:
    """Bring the records in line with the stored main line as it is now (after revisions that descend
    from a dropped commit were saved, or a re-derivation); the records written."""
    off = store.revisions.off_main_branch(repo)
    records = store.advisories.records(repo)
    if not off and not any(r.withdrawn is not None for r in records):
        return []
    out = off_main_line_updates(records, off, now)
    if out:
        store.revisions.replace_derived(repo, {}, out)
    return out
