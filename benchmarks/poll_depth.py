"""What a poll that finds one new commit reads from the store, at any history depth.

A SQLite store holds repos of 12, 1,000 and 3,000 revisions. Every other revision raised an update
advisory on one of 40 config keys, every tenth a hazard fixed three revisions later, and one hazard
is still open: the records a poll plans a new revision against are those of the keys its changes
touch and the open ones. Timed per repo, p50 over RUNS, the store reads of such a poll before the
new revision is processed, as the poller makes them:

- now: the stored head, the listed commits looked up (the new one and the head), the records to
  plan against (`advisories_to_plan`: the open ones and those of the change's key) and the first id;
- before (the reads this replaced): the head, every stored sha, every advisory of the repo decoded,
  the first id.

The target is the one the web reads have: the 1,000-revision repo ≤ 2× the 12-revision one.
Run: `python -m benchmarks.poll_depth` (writes benchmarks/results/poll_depth.md).
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from rich.console import Console

from benchmarks.deep_history import advisory, fill_line, publish, sha_at
from benchmarks.timing import p50_ms
from hubwatch.advisories.advise_match import change_keys
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, Direction, Kind, RepoId, Severity
from hubwatch.storage import Store

__all__ = ["main"]

DEPTHS = {RepoId("shallow", "model"): 12, RepoId("deep", "model"): 1000, RepoId("deeper", "model"): 3000}
KEYS, RUNS, TARGET = 40, 40, 2.0
RESULTS = Path(__file__).parent / "results" / "poll_depth.md"


def _record(repo: RepoId, i: int, when: datetime, direction: str, events: list[dict[str, str]]) -> AdvisoryRecord:
    key = f"k{i % KEYS}"
    entry = {"kind": "config", "severity": "high", "path": f"config.json:{key}", "summary": f"{key} {i}",
             "direction": direction, "detail": {"file": "config.json", "key": key, "old": i, "new": i + 1}}
    return advisory(repo, sha_at(repo, i), when, events, f"{repo}: {key}", direction=direction, changes=[entry])


def fill(store: Store) -> None:
    for repo, depth in DEPTHS.items():
        def records(i: int, sha: str, when: datetime, repo: RepoId = repo, depth: int = depth) -> list[AdvisoryRecord]:
            if i and i % 10 == 0:
                fix = [{"fixed": sha_at(repo, i + 3)}] if i + 10 < depth else []  # the last one stays open
                return [_record(repo, i, when, "hazard", [{"introduced": sha}, *fix])]
            if i and i % 2 == 0:
                return [_record(repo, i, when, "update", [{"introduced": "0"}, {"fixed": sha}])]
            return []

        fill_line(store, repo, depth, records)


def now_reads(store: Store, repo: RepoId) -> Callable[[], list[AdvisoryRecord]]:
    new = hashlib.sha1(f"{repo}/new".encode()).hexdigest()
    pairs = change_keys(ChangeRecord(Kind.CONFIG, Severity.HIGH, "config.json:k4", "k4", {
        "file": "config.json", "key": "k4", "old": 1, "new": 2}, Direction.UPDATE))

    def reads() -> list[AdvisoryRecord]:
        head = store.head(repo)
        assert head is not None
        store.revisions.stored_among(repo, [new])  # the listing's new commit (the head is the stored one)
        store.revisions.stored_among(repo, [new, head.sha])
        store.first_id(repo)
        return store.advisories.to_plan(repo, pairs)

    return reads


def before_reads(store: Store, repo: RepoId) -> Callable[[], object]:
    def reads() -> object:
        store.head(repo)
        store.revisions.known_shas(repo)
        store.first_id(repo)
        return store.advisories.records(repo)

    return reads


def main() -> int:
    console = Console(width=130)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(f"sqlite:///{Path(tmp) / 'depth.db'}")
        try:
            fill(store)
            figures = {repo: (p50_ms(now_reads(store, repo), RUNS), p50_ms(before_reads(store, repo), RUNS),
                              len(now_reads(store, repo)()), len(store.advisories.records(repo))) for repo in DEPTHS}
        finally:
            store.close()
    shallow = next(iter(DEPTHS))
    rows, ok = [], True
    for repo, depth in DEPTHS.items():
        now, before, read, stored = figures[repo]
        ratio, old_ratio = now / figures[shallow][0], before / figures[shallow][1]
        if depth == 1000:
            ok = ratio <= TARGET
        rows.append((str(repo), f"{depth:,}", f"{stored:,}", str(read), f"{now:.2f}", f"{ratio:.2f}×",
                     f"{before:.2f}", f"{old_ratio:.2f}×"))
    publish(console, "a poll's store reads before its new revision, p50",
            ("repo", "revisions", "advisories", "records read now", "now (ms)", "× 12-revision", "before (ms)",
             "× 12-revision"), rows, RESULTS,
            "# A poll's store reads at depth\n\n`python -m benchmarks.poll_depth` (SQLite)",
            f"1,000 revisions ≤ {TARGET}× 12: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
