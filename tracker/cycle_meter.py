"""Measures one poll cycle for `poll_cycles`: each repo type's listing, requests by status, outcomes,
rate-limit waits, lag."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hubwatch.domain.clock import Clock
from hubwatch.domain.records import RepoType
from hubwatch.tracker import requests_seen, transport
from hubwatch.tracker.poller import Failed, NewRevisions, PollOutcome

if TYPE_CHECKING:
    from hubwatch.storage import Store
    from hubwatch.storage.ops.telemetry import CycleReport

__all__ = ["CycleMeter"]


def _status_class(status: int) -> str:
    """The `poll_cycles` column class of one request's status (`NO_ANSWER`: failed)."""
    if status == requests_seen.NO_ANSWER:
        return "failed"
    if status == 429:
        return "429"
    if status >= 500:
        return "5xx"
    if status >= 400:
        return "4xx"
    return "3xx" if status >= 300 else "ok"


class CycleMeter:
    """Started with the cycle; `report()` at its end turns what happened into a `CycleReport`.

    Requests are those counted at the hub client's transport (`requests_seen`: every request sent,
    by its answer's status, or unanswered) between start and end for this hub's origin (cycles of several workers in one process against one hub
    would share counts; workers are processes). Lag is, per new revision, the time from its
    upstream commit date to the end of the poll that stored it.
    """

    def __init__(self, endpoint: str, worker: str, clock: Clock) -> None:
        transport.install()  # the counting transport on the library's current client
        self._endpoint, self._worker, self._clock = endpoint, worker, clock
        self._before = requests_seen.snapshot(endpoint)
        self.started_at = clock()
        # How each repo type's recently-modified listing went: ok, busy or failed; a type not read
        # (none of it watched, or a webhook's poll) is absent and reported as none.
        self.listings: dict[RepoType, str] = {}

    def report(self, outcomes: Sequence[PollOutcome], store: Store) -> CycleReport:
        from hubwatch.storage.ops.telemetry import CycleReport

        finished = self._clock()
        counts = requests_seen.snapshot(self._endpoint)
        counts.subtract(self._before)
        by = {"ok": 0, "3xx": 0, "4xx": 0, "429": 0, "5xx": 0, "failed": 0}
        for status, n in counts.items():
            by[_status_class(status)] += max(n, 0)
        lags: list[float] = []
        for outcome in outcomes:
            if isinstance(outcome, NewRevisions) and outcome.shas:
                for date in store.revisions.revision_dates(outcome.repo, outcome.shas).values():  # one query a repo
                    lags.append(max(0.0, (finished - date).total_seconds()))
        failures = [o for o in outcomes if isinstance(o, Failed) and not o.deferred]  # a deferral is no failure
        deferred = sum(1 for o in outcomes if isinstance(o, Failed) and o.deferred)
        return CycleReport(
            worker=self._worker,
            started_at=self.started_at,
            finished_at=max(finished, self.started_at),
            listing=self.listings.get(RepoType.MODEL, "none"),
            datasets_listing=self.listings.get(RepoType.DATASET, "none"),
            repos=len(outcomes),
            new_revisions=sum(len(o.shas) for o in outcomes if isinstance(o, NewRevisions)),
            failures=len(failures),
            rate_limited=by["429"] + deferred,
            requests_ok=by["ok"],
            requests_3xx=by["3xx"],
            requests_4xx=by["4xx"],
            requests_429=by["429"],
            requests_5xx=by["5xx"],
            requests_failed=by["failed"],
            lag_max_s=max(lags) if lags else None,
            lag_mean_s=sum(lags) / len(lags) if lags else None,
        )
