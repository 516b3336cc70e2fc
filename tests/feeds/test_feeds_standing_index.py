"""A pin's standing from the events index is the standing read off the whole line, at bounded cost.

`standing_at` answers a linear history longer than `WHOLE_LINE_UP_TO` from `store.advisories.pin_points`
(the advisories holding the pin, the newest revision no open hazard holds); `whole_line_standing`
reads every revision and every advisory. Here the index answers histories of any length
(`WHOLE_LINE_UP_TO` set to 0). Hypothesis histories of any shape (linear or not, a head moved back, advisories of both
directions with events anywhere, withdrawn ones, acknowledged ids) must give the same Standing for
every stored revision and an unknown one, read along a dropped revision's own line (the web app) or
on the main line only (`hubwatch check`). The pages and badges that show a standing, and `hubwatch
check` against the local store, read as much at 152 revisions as at 12.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from feeds_seed import make_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hubwatch.advisories.pin_standing import standing_at
import hubwatch.storage.advisories.pinpoints as pinpoints
from hubwatch.domain.records import AdvisoryRecord, RepoId, RevisionRecord
from hubwatch.feeds import create_app
from hubwatch.advisories.standing import Standing
from hubwatch.pincheck.pincheck import StoreSource
from hubwatch.feeds.builders.standing import load_standing, whole_line_standing
from hubwatch.storage import Store

T0 = datetime(2024, 1, 1, 12, tzinfo=UTC)
_names = itertools.count()


def sha(label: str) -> str:
    return hashlib.sha1(label.encode()).hexdigest()


def osv(repo: RepoId, adv_id: str, ranges: list[list[dict[str, str]]], direction: str | None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": adv_id, "modified": "2024-01-01T12:00:00Z", "published": "2024-01-01T12:00:00Z",
        "affected": [{"package": {"ecosystem": "GIT", "name": repo.url()},
                      "ranges": [{"type": "GIT", "repo": repo.url(), "events": events}]} for events in ranges],
    }
    if direction is not None:  # as hubwatch writes it; without it the events decide
        record["database_specific"] = {"direction": direction, "changes": [], "max_severity": "high"}
    return record


def whole_line(store: Store, repo: RepoId, pin: str, own_line: bool, ignored: frozenset[str] = frozenset()
               ) -> Standing | None:
    """The standing read off the whole line again, nothing kept (the reference)."""
    return whole_line_standing(store, repo, pin, own_line, ignored)


def assert_same_standing(store: Store, repo: RepoId, pins: list[str], ignored: frozenset[str]) -> None:
    for pin in pins:
        stored = store.revision(repo, pin) is not None
        assert load_standing(store, repo, pin, ignored) == whole_line(store, repo, pin, stored, ignored), pin
        assert standing_at(store, repo, pin, ignored, main_line_only=True) == whole_line(store, repo, pin, False, ignored), pin


_parent = st.sampled_from(["prev", "prev", "prev", "prev", "prev", "none", "ghost", "earlier", "later"])
_event = st.tuples(st.sampled_from(["introduced", "introduced", "fixed", "fixed", "last_affected", "limit"]),
                   st.sampled_from(["0", "*", "rev", "rev", "rev", "ghost"]), st.integers(0, 40))
_advisory = st.tuples(st.integers(0, 40), st.lists(st.lists(_event, min_size=1, max_size=6), min_size=1, max_size=2),
                      st.booleans(), st.sampled_from([None, "hazard", "hazard", "update"]), st.booleans())


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parents=st.lists(st.tuples(_parent, st.integers(0, 40)), min_size=1, max_size=16),
       advisories=st.lists(_advisory, max_size=9), back=st.one_of(st.none(), st.integers(0, 40)))
def test_the_index_gives_the_whole_lines_standing_on_any_history(
    store: Store, parents: list[tuple[str, int]], advisories: list[tuple[Any, ...]], back: int | None
) -> None:
    repo = RepoId("prop", f"s{next(_names)}")
    labels = [f"{repo.name}-{i}" for i in range(len(parents))]
    records, ignored = [], set()
    for number, (raised, ranges, withdrawn, direction, acknowledged) in enumerate(advisories):
        adv_id = f"x_S-{repo.name}-{number}"
        events = [[{kind: "*" if value == "*" and kind == "limit" else "0" if value in ("0", "*")
                    else sha(f"{repo.name}-ghost") if value == "ghost" else sha(labels[k % len(labels)])}
                   for kind, value, k in rng] for rng in ranges]
        body = osv(repo, adv_id, events, direction)
        if withdrawn:
            body["withdrawn"] = "2024-01-02T12:00:00Z"
        if acknowledged:
            ignored.add(adv_id)
        at = raised % len(labels)
        records.append((at, AdvisoryRecord(adv_id, repo, sha(labels[at]), body, T0, T0 if withdrawn else None)))
    for i, (kind, k) in enumerate(parents):
        parent = {"prev": labels[i - 1] if i else None, "none": None, "ghost": f"{repo.name}-ghost",
                  "earlier": labels[k % i] if i else None, "later": labels[k % len(labels)]}[kind]
        raised_here = [record for at, record in records if at == i]
        assert store.save_revision(repo, RevisionRecord(sha(labels[i]), None if parent is None else sha(parent),
                                                        T0 + timedelta(days=i), f"commit {i}"), [], {}, [], None,
                                   raised_here)
    if back is not None and len(labels) > 1:  # a force-push back to an older stored revision
        to = back % (len(labels) - 1)
        store.revisions.record_rewrite(repo, sha(labels[-1]), sha(labels[to]), [sha(x) for x in labels[to + 1:]], T0)
    pins = [sha(label) for label in labels] + [sha("never stored")]
    assert_same_standing(store, repo, pins, frozenset())
    assert_same_standing(store, repo, pins, frozenset(ignored))


def test_a_run_of_held_revisions_is_crossed_to_the_newest_clean_one(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hazards reintroduced and fixed along the line, the head held: the newest clean revision is
    found between them (not skipped by taking a range's first introduction for its last)."""
    repo = RepoId("skip", "m")
    shas = [sha(f"skip-{i}") for i in range(12)]

    def hazard(n: int, events: list[dict[str, str]]) -> AdvisoryRecord:
        return AdvisoryRecord(f"x_K-{n}", repo, shas[0], osv(repo, f"x_K-{n}", [events], "hazard"), T0, None)

    raised = [hazard(1, [{"introduced": shas[1]}, {"fixed": shas[3]}, {"introduced": shas[6]}]),  # 1-2, 6-11
              hazard(2, [{"introduced": shas[8]}, {"fixed": shas[10]}]),  # 8-9
              hazard(3, [{"introduced": shas[2]}, {"fixed": shas[4]}])]  # 2-3: 4 and 5 are clean
    for i, here in enumerate(shas):
        store.save_revision(repo, RevisionRecord(here, shas[i - 1] if i else None, T0 + timedelta(hours=i), f"c {i}"),
                            [], {}, [], None, raised if i == 0 else [])
    found = standing_at(store, repo, shas[9])
    assert found == whole_line(store, repo, shas[9], True)
    assert found is not None and found.suggested == shas[5] and found.resolves == ("x_K-1", "x_K-2")
    assert store.advisories.pin_points(repo, shas[9], lambda a: True) is not None  # answered by the index
    # Two looks (the head, then 5): allowed one, the index gives up and the whole line answers the same.
    monkeypatch.setattr(pinpoints, "MAX_CLEAN_STEPS", 1)
    assert store.advisories.pin_points(repo, shas[9], lambda a: True) is None
    assert standing_at(store, repo, shas[9]) == found


def _deep(store: Store, repo: RepoId, depth: int) -> list[str]:
    """A line of `depth` revisions; every fourth introduces a hazard fixed two later, and an update
    (introduced "0") is published at every tenth, fixed there."""
    store.watch(repo)
    shas = [sha(f"{repo}/{i}") for i in range(depth)]
    for i, here in enumerate(shas):
        raised = []
        if i % 4 == 1 and i + 2 < depth:
            raised.append(AdvisoryRecord(f"x_H-{repo.name}-{i}", repo, here, osv(
                repo, f"x_H-{repo.name}-{i}", [[{"introduced": here}, {"fixed": shas[i + 2]}]], "hazard"), T0, None))
        if i % 10 == 9:
            raised.append(AdvisoryRecord(f"x_U-{repo.name}-{i}", repo, here, osv(
                repo, f"x_U-{repo.name}-{i}", [[{"introduced": "0"}, {"fixed": here}]], "update"), T0, None))
        store.save_revision(repo, RevisionRecord(here, shas[i - 1] if i else None, T0 + timedelta(hours=i), f"c {i}"),
                            [], {}, [], None, raised)
    return shas


@pytest.fixture(autouse=True)
def index_at_any_depth(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pinpoints, "WHOLE_LINE_UP_TO", 0)


def test_pages_and_badges_of_a_pin_read_as_much_at_any_depth(
    store: Store, decoded: list[str], count_selects: Callable[[Store], AbstractContextManager[list[str]]]
) -> None:
    client = TestClient(create_app(make_settings(), store))
    figures: dict[str, list[tuple[int, int]]] = {}
    for depth in (12, 152):  # the same tail: the pin three from the head, at a hazard, past an update
        repo = RepoId("deep", f"p{depth}")
        shas = _deep(store, repo, depth)
        pin = shas[depth - 3]
        standing_at(store, repo, pin)  # the history's shape is checked once per version
        paths = [f"/models/{repo}/revisions/{pin}", f"/api/v1/models/{repo}/revisions/{pin}/standing",
                 f"/badges/{repo}/revisions/{pin}.json", f"/badges/{repo}.json"]
        for route, path in zip(("revision page", "standing", "pin badge", "repo badge"), paths):
            decoded.clear()
            with count_selects(store) as selects:
                answer = client.get(path)
            assert answer.status_code == 200, (path, answer.text)
            figures.setdefault(route, []).append((len(selects), len(decoded)))
        standing = client.get(f"/api/v1/models/{repo}/revisions/{pin}/standing").json()
        assert [a["id"] for a in standing["carries"]] == [f"x_H-{repo.name}-{depth - 3}"]
        assert standing["suggested"] == shas[-1] and standing["newest"] == shas[-1]
    for route, ((few_selects, few_decoded), (many_selects, many_decoded)) in figures.items():
        assert many_selects == few_selects, (route, figures[route])
        assert many_decoded == few_decoded <= 6, (route, figures[route])


def test_a_check_against_the_local_store_reads_as_much_at_any_depth(
    store: Store, decoded: list[str], count_selects: Callable[[Store], AbstractContextManager[list[str]]]
) -> None:
    """`hubwatch check` (no --server): a pin's answer reads no more at 152 revisions than at 12, and
    says what the web app's standing says (the hazard it carries, the revision to move to)."""
    figures: list[tuple[int, int]] = []
    for depth in (12, 152):
        repo = RepoId("check", f"p{depth}")
        shas = _deep(store, repo, depth)
        pin = shas[depth - 3]
        standing_at(store, repo, pin)  # the history's shape is checked once per version
        decoded.clear()
        with count_selects(store) as selects:
            [answer] = StoreSource(store).lookup([(repo, pin[:12])])
        figures.append((len(selects), len(decoded)))
        assert answer.commit == pin and [h.id for h in answer.hits] == [f"x_H-{repo.name}-{depth - 3}"]
        assert answer.suggestion is not None and answer.suggestion.commit == shas[-1]
        assert answer.suggestion.resolves == (f"x_H-{repo.name}-{depth - 3}",)
    (few_selects, few_decoded), (many_selects, many_decoded) = figures
    assert many_selects == few_selects and many_decoded == few_decoded <= 3, figures
