"""One rule for every reader after rewinds, restores and new commits (issue 31: "rewrites mean what
upstream now has"), by property tests over random histories.

A history is a chain of commits, each raising an update (or nothing); then upstream moves: it
force-pushes back to an older commit, pushes dropped commits back, or adds a commit on the head it
has now. Each move is stored as the poller stores it (`record_rewrite` / `move_head` / a saved
revision, with the advisory records of `hubwatch.tracker.rewound`). The rule, for the recorded head H:

- a pin at a revision r on the main line (an ancestor of H) lacks exactly the updates raised at the
  main-line commits after r, so a pin at H lacks nothing;
- a pin on a commit off the main line is told so and given a revision to move to.

Every reader must say the same: the store's standing (what `hubwatch check` reads locally, main
line only, and what the pages read), `hubwatch check`'s local source, the OSV API's `/v1/query`
and `/v1/querybatch`, and the revision badge.
"""

from __future__ import annotations

import hashlib
import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hubwatch.advisories.pin_standing import standing_at
from hubwatch.advisories.advise import plan_advisories
from hubwatch.domain.records import ChangeRecord, Direction, Kind, RepoId, RevisionRecord, Severity
from hubwatch.feeds import create_app
from hubwatch.pincheck.pincheck import StoreSource
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.tracker.rewound import after_head_move, after_rewrite, settle_off_main_line

T0 = datetime(2024, 1, 1, 12, tzinfo=UTC)
SETTINGS = Settings()
_names = itertools.count()


def _sha(label: str) -> str:
    return hashlib.sha1(label.encode()).hexdigest()


class History:
    """The commits upstream ever had (parent links), what the store holds, and the head."""

    def __init__(self, store: Store, repo: RepoId) -> None:
        self.store, self.repo = store, repo
        self.parent: dict[str, str | None] = {}
        self.updates: dict[str, str] = {}  # commit -> the id of the update it raised
        self.head: str | None = None
        self.n = 0

    def commit(self, raises_update: bool) -> None:
        """A new commit on the current head (the poller saves it; a dropped parent comes back)."""
        sha = _sha(f"{self.repo}-{self.n}")
        self.n += 1
        changes = []
        if raises_update:
            key = f"k{self.n}"
            changes.append(ChangeRecord(Kind.CONFIG, Severity.MEDIUM, f"config.json:{key}", f"{key} 0 → 1",
                                        {"file": "config.json", "key": key, "old": 0, "new": 1}, "update"))
        revision = RevisionRecord(sha, self.head, T0 + timedelta(days=self.n), f"commit {self.n}")
        planned = plan_advisories(self.repo, revision, changes, self.store.advisories.records(self.repo), SETTINGS)
        assert self.store.save_revision(self.repo, revision, [], {}, changes, None, planned)
        for record in planned:
            if record.revision_sha == sha and record.osv["database_specific"].get("direction") == "update":
                self.updates[sha] = record.id
        back_on_line = self.head is not None and self.head in self.store.revisions.off_main_branch(self.repo)
        self.parent[sha] = self.head
        self.head = sha
        if back_on_line:
            settle_off_main_line(self.store, self.repo, T0)

    def line(self, sha: str | None) -> list[str]:
        """`sha` and its ancestors, newest first."""
        out = []
        while sha is not None:
            out.append(sha)
            sha = self.parent[sha]
        return out

    def rewind(self, steps: int) -> None:
        """Upstream force-pushes back `steps` commits (at least one commit stays)."""
        line = self.line(self.head)
        if len(line) < 2:
            return
        to = line[min(steps, len(line) - 1)]
        dropped = sorted(set(self.parent) - set(self.line(to)))
        old = self.head
        assert old is not None
        self.store.revisions.record_rewrite(self.repo, old, to, dropped, T0, after_rewrite(self.store, self.repo, dropped, T0))
        self.head = to

    def restore(self, pick: int) -> None:
        """Upstream pushes back a dropped commit that descends from the head."""
        off = self.store.revisions.off_main_branch(self.repo)
        candidates = sorted(c for c in off if self.head in self.line(c))
        if not candidates:
            return
        to = candidates[pick % len(candidates)]
        self.store.revisions.move_head(self.repo, to, T0, after_head_move(self.store, self.repo, to, T0))
        self.head = to

    def lacks(self, pin: str) -> set[str]:
        """The rule: the updates raised on the main line after `pin`."""
        main = self.line(self.head)
        after = main[: main.index(pin)]
        return {self.updates[c] for c in after if c in self.updates}


_move = st.one_of(
    st.tuples(st.just("commit"), st.booleans()),
    st.tuples(st.just("rewind"), st.integers(1, 4)),
    st.tuples(st.just("restore"), st.integers(0, 5)),
)


def _lacked_ids(body: dict[str, Any]) -> set[str]:
    return {v["id"] for v in body.get("vulns", [])}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.lists(st.booleans(), min_size=2, max_size=6), moves=st.lists(_move, min_size=1, max_size=6))
def test_every_reader_follows_the_main_line_after_rewinds_and_restores(
    store: Store, start: list[bool], moves: list[tuple[str, Any]]
) -> None:
    repo = RepoId("rewind", f"r{next(_names)}")
    store.watch(repo)
    history = History(store, repo)
    history.commit(False)
    for raises in start:
        history.commit(raises)
    for move, arg in moves:
        {"commit": history.commit, "rewind": history.rewind, "restore": history.restore}[move](arg)
    head = history.head
    assert head is not None and store.head(repo) is not None and store.head(repo).sha == head  # type: ignore[union-attr]
    main = history.line(head)
    off = sorted(set(history.parent) - set(main))
    assert store.revisions.off_main_branch(repo) == frozenset(off)
    source = StoreSource(store)
    with TestClient(create_app(Settings(database_url="sqlite://"), store)) as web:
        batch = web.post("/v1/querybatch", json={"queries": [{"commit": c} for c in main]}).json()["results"]
        for pin, batched in zip(main, batch):
            want = history.lacks(pin)
            standing = standing_at(store, repo, pin)
            assert standing is not None and standing.on_main_line
            assert {a.id for a in standing.lacks} == want, (pin == head, pin)
            assert standing.carries == ()
            (looked,) = source.lookup([(repo, pin)])
            assert looked.commit == pin and looked.on_main_line
            assert {h.id for h in looked.hits} == want
            assert _lacked_ids(web.post("/v1/query", json={"commit": pin}).json()) == want
            assert {v["id"] for v in batched.get("vulns", [])} == want
            message = web.get(f"/badges/{repo}/revisions/{pin}.json").json()["message"]
            assert ("lacks" in message) == bool(want), (message, want)
        for pin in off:
            standing = standing_at(store, repo, pin)
            assert standing is not None and not standing.on_main_line
            assert standing.suggested in main  # told to move back onto the main line
    # the withdrawn updates are exactly those raised off the main line
    withdrawn = {a.id for a in store.advisories.records(repo) if a.withdrawn is not None}
    assert withdrawn == {history.updates[c] for c in off if c in history.updates}
    for record in store.advisories.records(repo):
        if record.id in withdrawn:
            assert record.osv["database_specific"]["withdrawn_because"] == "commit_off_main_line"
        assert Direction.parse(record.osv["database_specific"]["direction"]) is Direction.UPDATE
