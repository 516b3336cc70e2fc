"""`hubwatch check` against the local store, at any history depth.

A SQLite store holds repos of 12, 1,000 and 3,000 revisions, and one of 1,000 a force-push made
more than one line (its revision 334 went on from 328: the history is no longer linear, the
index of positions does not apply); every fourth revision introduces a hazard fixed two
revisions later, as in `benchmarks.web_depth`, so a pin in the middle of any of them carries one
hazard and is told to move to the head: the same answer at every depth. Timed
per repo, p50 over RUNS, the answer for one pin given as a 12-digit prefix:

- now: `StoreSource.lookup` (`standing_at`: the events index on a long linear history), with
  the repo's interval index and linearity check already made for this history version (a server,
  or a check of many pins), and cold: each made anew, as the first ask after a poll stored a
  revision, or a `hubwatch check` process of one pin, pays;
- before (what the check read until this stop): the repo's whole main line and every advisory
  decoded, the standing computed from them, per pin.

The target is the web reads': the 1,000-revision repos ≤ 2× the 12-revision one.
Run: `python -m benchmarks.check_depth` (writes benchmarks/results/check_depth.md).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from rich.console import Console

from benchmarks.deep_history import advisory, fill_line, publish, sha_at
from benchmarks.timing import p50_ms
from hubwatch.advisories.standing import standing
from hubwatch.domain.records import AdvisoryRecord, RepoId
from hubwatch.pincheck.pincheck import StoreSource, lookup_from_standing
from hubwatch.pincheck.report import Lookup
from hubwatch.storage import Store, versioned

__all__ = ["main"]

REWRITTEN = RepoId("rewritten", "model")
DEPTHS = {RepoId("shallow", "model"): 12, RepoId("deep", "model"): 1000, RepoId("deeper", "model"): 3000,
          REWRITTEN: 1000}
RUNS, TARGET = 40, 2.0
RESULTS = Path(__file__).parent / "results" / "check_depth.md"


def _hazard(repo: RepoId, sha: str, fix: str, when: datetime) -> AdvisoryRecord:
    return advisory(repo, sha, when, [{"introduced": sha}, {"fixed": fix}], f"{repo}: eos changed",
                    direction="hazard", changes=[])


def fill(store: Store) -> None:
    for repo, depth in DEPTHS.items():
        def records(i: int, sha: str, when: datetime, repo: RepoId = repo, depth: int = depth) -> list[AdvisoryRecord]:
            return [_hazard(repo, sha, sha_at(repo, i + 2), when)] if i % 4 == 1 and i + 2 < depth else []

        def parent(i: int, previous: str | None, repo: RepoId = repo, depth: int = depth) -> str | None:
            if repo == REWRITTEN and i == depth // 3 + 1:
                return sha_at(repo, depth // 3 - 5)  # a force-push onto an older commit
            return previous

        fill_line(store, repo, depth, records, parent)


def _pin(repo: RepoId, depth: int) -> str:
    middle = depth // 2
    return sha_at(repo, middle - middle % 4 + 1)  # introduces a hazard: the pin carries one


def now(store: Store, repo: RepoId, pin: str) -> Callable[[], Lookup]:
    source = StoreSource(store)
    return lambda: source.lookup([(repo, pin[:12])])[0]


def cold(store: Store, repo: RepoId, pin: str) -> Callable[[], Lookup]:
    ask = now(store, repo, pin)

    def read() -> Lookup:
        versioned.forget()  # what a new process, or the first read of a new history version, starts from
        return ask()

    return read


def before(store: Store, repo: RepoId, pin: str) -> Callable[[], Lookup]:
    def read() -> Lookup:
        full = store.revision(repo, pin[:12])  # as the check resolved a pin
        line = store.revisions.revision_shas(repo)
        assert full is not None and line is not None
        return lookup_from_standing(standing(line, store.advisories.records(repo), full.revision.sha), frozenset())

    return read


def main() -> int:
    console = Console(width=130)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(f"sqlite:///{Path(tmp) / 'depth.db'}")
        try:
            fill(store)
            figures = {}
            for repo, depth in DEPTHS.items():
                pin = _pin(repo, depth)
                answer = now(store, repo, pin)()
                assert answer == before(store, repo, pin)(), repo  # the same answer, read two ways
                assert len(answer.hits) == 1 and answer.suggestion is not None, answer
                assert answer == cold(store, repo, pin)()
                figures[repo] = (p50_ms(now(store, repo, pin), RUNS), p50_ms(cold(store, repo, pin), RUNS),
                                 p50_ms(before(store, repo, pin), RUNS))
        finally:
            store.close()
    shallow = next(iter(DEPTHS))
    rows, ok = [], True
    for repo, depth in DEPTHS.items():
        new, first, old = figures[repo]
        ratio, cold_ratio, old_ratio = (new / figures[shallow][0], first / figures[shallow][1],
                                        old / figures[shallow][2])
        if depth == 1000:
            ok = ok and ratio <= TARGET
        rows.append((str(repo), f"{depth:,}", f"{new:.2f}", f"{ratio:.2f}×", f"{first:.2f}", f"{cold_ratio:.2f}×",
                     f"{old:.2f}", f"{old_ratio:.2f}×"))
    publish(console, "`hubwatch check` of one pin against the local store, p50",
            ("repo", "revisions", "now (ms)", "× 12-revision", "cold (ms)", "× 12-revision", "before (ms)",
             "× 12-revision"), rows, RESULTS,
            "# `hubwatch check` against the local store, at depth\n\n"
            "`python -m benchmarks.check_depth` (SQLite; one pin, answered the same at every depth)",
            f"1,000 revisions ≤ {TARGET}× 12: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
