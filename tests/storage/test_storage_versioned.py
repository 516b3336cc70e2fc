"""What reads keep per history version (`storage.versioned`) is never stale: after every kind of write
between reads, a pin's standing and the advisories affecting it equal what the whole history, read
again, says; on a linear history (the interval index) and on one a force-push made non-linear (the
main line's facts, the stored links)."""

from __future__ import annotations

from typing import Any

import pytest

from hubwatch.advisories.pin_standing import standing_at
import hubwatch.storage.advisories.pinpoints as pinpoints
from hubwatch.advisories.standing import standing
from hubwatch.domain.records import AdvisoryRecord, RepoId
from hubwatch.storage import Store
from hubwatch.storage.advisories.osvmatch import ids_by_lineage, is_linear
from hubwatch.storage.repos.repos import find_repo
from storage_helpers import T0, rev, sha


def _osv(repo: RepoId, adv_id: str, events: list[dict[str, str]], direction: str, withdrawn: bool = False
         ) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": adv_id, "modified": "2024-01-02T12:00:00Z" if withdrawn else "2024-01-01T12:00:00Z",
        "published": "2024-01-01T12:00:00Z",
        "affected": [{"package": {"ecosystem": "GIT", "name": repo.url()},
                      "ranges": [{"type": "GIT", "repo": repo.url(), "events": events}]}],
        "database_specific": {"direction": direction, "changes": [], "max_severity": "high"},
    }
    if withdrawn:
        body["withdrawn"] = "2024-01-02T12:00:00Z"
    return body


def _hazard(repo: RepoId, label: str, fix: str | None, withdrawn: bool = False) -> AdvisoryRecord:
    adv_id = f"x_V-{label}"
    events = [{"introduced": sha(label)}] + ([{"fixed": sha(fix)}] if fix else [])
    return AdvisoryRecord(adv_id, repo, sha(label), _osv(repo, adv_id, events, "hazard", withdrawn), T0,
                          T0 if withdrawn else None)


def _agrees(store: Store, repo: RepoId, pins: list[str]) -> None:
    line = store.revisions.revision_shas(repo) or []
    records = store.advisories.records(repo)
    with store.engine.connect() as conn:
        repo_id = find_repo(conn, repo)
        assert repo_id is not None
        for pin in pins:
            assert standing_at(store, repo, pin, main_line_only=True) == standing(line, records, pin), pin
            assert store.advisories.ids_affecting(repo, pin) == ids_by_lineage(conn, repo_id, pin), pin


@pytest.mark.parametrize("rewritten", [False, True], ids=["linear", "force-pushed"])
def test_every_write_is_seen_by_the_next_read(store: Store, monkeypatch: pytest.MonkeyPatch, rewritten: bool) -> None:
    monkeypatch.setattr(pinpoints, "WHOLE_LINE_UP_TO", 0)  # the index answers at any length
    repo = RepoId("kept", "rewritten" if rewritten else "linear")
    labels = [f"{repo.name}-{i}" for i in range(24)]
    for i, label in enumerate(labels):
        parent = labels[4] if rewritten and i == 12 else labels[i - 1] if i else None  # 12 forks off 4
        raised = [_hazard(repo, label, labels[i + 2])] if i % 4 == 1 and i + 2 < len(labels) else []
        assert store.save_revision(repo, rev(label, parent, day=i), [], {}, [], None, raised)
    with store.engine.connect() as conn:
        repo_id = find_repo(conn, repo)
        assert repo_id is not None
        assert is_linear(conn, repo_id) is not rewritten
    pins = [sha(label) for label in labels] + [sha("never stored")]
    _agrees(store, repo, pins)  # what is kept is made here

    new = f"{repo.name}-new"  # a revision raising an open hazard
    assert store.save_revision(repo, rev(new, labels[-1], day=30), [], {}, [], None, [_hazard(repo, new, None)])
    pins.append(sha(new))
    _agrees(store, repo, pins)

    store.revisions.replace_derived(repo, {}, [_hazard(repo, labels[17], labels[19], withdrawn=True)])  # withdrawn
    _agrees(store, repo, pins)

    assert store.revisions.record_rewrite(repo, sha(new), sha(labels[20]), [sha(new), sha(labels[-1])], T0)  # pushed back
    _agrees(store, repo, pins)

    assert store.revisions.move_head(repo, sha(new))  # and forward again
    _agrees(store, repo, pins)
