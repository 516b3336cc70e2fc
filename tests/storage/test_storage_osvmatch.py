"""Advisory matching by the events index: the same ids as the lineage walk over every stored
revision (seeded stores, Hypothesis histories of any shape), and `/v1/query` bounded at any depth."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hubwatch.domain.records import AdvisoryRecord, RepoId
from hubwatch.feeds.app import create_app
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.storage.advisories.heldindex import HeldIndex, stretches
from hubwatch.storage.advisories.osvmatch import affecting_ids, ids_by_lineage, is_linear
from hubwatch.domain.gitrange import GitEvent, affects_at
from hubwatch.storage.repos.repos import find_repo
from storage_helpers import T0, rev, sha

_names = itertools.count()


def _check_repo(store: Store, repo: RepoId) -> list[bool]:
    """Every stored revision's answer by the index equals the lineage walk's; the linear flags seen."""
    with store.engine.connect() as conn:
        repo_id = find_repo(conn, repo)
        assert repo_id is not None
        shas = [s for s in store.revisions.revision_shas(repo) or []]
        shas += [e.revision.sha for e in store.history(repo) if e.revision.sha not in shas]
        for full in shas:
            assert affecting_ids(conn, repo_id, full) == ids_by_lineage(conn, repo_id, full), full
            assert store.advisories.ids_affecting(repo, full) == ids_by_lineage(conn, repo_id, full)
        return [is_linear(conn, repo_id)]


def test_seeded_store_answers_as_the_lineage_walk(advised_store_url: str) -> None:
    with Store.open(advised_store_url) as store:
        for repo in (RepoId("acme", "llama-small"), RepoId("acme", "tiny")):
            assert _check_repo(store, repo) == [True]
        for _repo, advisory_id in store.advisories.ids_for_commit(sha("never")):
            raise AssertionError(advisory_id)


# A history: for each revision its parent (an earlier one, usually the one before; none; a commit
# never stored; or one stored later: out-of-order arrival), and advisories with events anywhere.
_parent = st.sampled_from(["prev", "prev", "prev", "prev", "none", "ghost", "earlier", "later"])
_event = st.tuples(st.sampled_from(["introduced", "introduced", "fixed", "last_affected", "limit"]),
                   st.sampled_from(["0", "*", "rev", "rev", "rev", "ghost"]), st.integers(0, 40))
_advisory = st.tuples(st.integers(0, 40), st.lists(st.lists(_event, min_size=1, max_size=4), min_size=1, max_size=2),
                      st.booleans())


def _osv(repo: RepoId, adv_id: str, ranges: list[list[dict[str, str]]]) -> dict[str, Any]:
    return {
        "id": adv_id,
        "modified": "2024-01-01T12:00:00Z",
        "published": "2024-01-01T12:00:00Z",
        "affected": [{"package": {"ecosystem": "GIT", "name": repo.url()},
                      "ranges": [{"type": "GIT", "repo": repo.url(), "events": events}]} for events in ranges],
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parents=st.lists(st.tuples(_parent, st.integers(0, 40)), min_size=1, max_size=10),
       advisories=st.lists(_advisory, max_size=6))
def test_any_history_answers_as_the_lineage_walk(
    store: Store, parents: list[tuple[str, int]], advisories: list[tuple[int, list[list[tuple[str, str, int]]], bool]]
) -> None:
    repo = RepoId("prop", f"m{next(_names)}")
    labels = [f"{repo.name}-{i}" for i in range(len(parents))]
    records = []
    for number, (raised, ranges, withdrawn) in enumerate(advisories):
        adv_id = f"x_P-{repo.name}-{number}"
        events = [[{kind: "*" if value == "*" and kind == "limit" else "0" if value in ("0", "*")
                    else sha(f"{repo.name}-ghost") if value == "ghost" else sha(labels[k % len(labels)])}
                   for kind, value, k in rng] for rng in ranges]
        osv = _osv(repo, adv_id, events)
        if withdrawn:
            osv["withdrawn"] = "2024-01-02T12:00:00Z"
        records.append((raised % len(labels), AdvisoryRecord(adv_id, repo, sha(labels[raised % len(labels)]), osv,
                                                             T0, T0 if withdrawn else None)))
    for i, (kind, k) in enumerate(parents):
        parent = {
            "prev": labels[i - 1] if i else None,
            "none": None,
            "ghost": f"{repo.name}-ghost",
            "earlier": labels[k % i] if i else None,
            "later": labels[k % len(labels)],
        }[kind]
        raised_here = [record for at, record in records if at == i]
        assert store.save_revision(repo, rev(labels[i], parent, day=i), [], {}, [], None, raised_here)
    _check_repo(store, repo)


# Shapes the lines of a non-linear history must answer as the walk does: (label, parent label) in
# the order stored. A force-push from an older commit (two lines), two of them, links in a loop (a
# revision's ancestry is then not the start of a line through it: the walk answers), a loop with a
# tail, revisions arriving before their parents.
_SHAPES = {
    "forked": [("a", None), ("b", "a"), ("c", "b"), ("d", "c"), ("e", "b"), ("f", "e")],
    "forked twice": [("a", None), ("b", "a"), ("c", "b"), ("d", "a"), ("e", "d"), ("f", "c"), ("g", "e")],
    "loop": [("a", "c"), ("b", "a"), ("c", "b")],
    "loop with a tail": [("a", None), ("b", "d"), ("c", "b"), ("d", "c"), ("e", "c"), ("f", "a")],
    "parents later": [("c", "b"), ("b", "a"), ("a", None), ("d", "c"), ("e", "b")],
}


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_each_shape_answers_as_the_lineage_walk(store: Store, shape: str) -> None:
    repo = RepoId("shape", shape.replace(" ", "-"))
    labels = [label for label, _ in _SHAPES[shape]]
    for i, (label, parent) in enumerate(_SHAPES[shape]):
        name, up = f"{repo.name}-{label}", f"{repo.name}-{parent}" if parent else None
        later = labels[(i + 2) % len(labels)]
        raised = [AdvisoryRecord(f"x_S-{name}", repo, sha(name), _osv(repo, f"x_S-{name}", [[
            {"introduced": sha(name)}, {"fixed": sha(f"{repo.name}-{later}")}]]), T0, None)]
        if i == 0:  # and an update from the start, fixed at the last revision stored
            raised.append(AdvisoryRecord(f"x_U-{name}", repo, sha(name), _osv(repo, f"x_U-{name}", [[
                {"introduced": "0"}, {"fixed": sha(f"{repo.name}-{labels[-1]}")}]]), T0, None))
        assert store.save_revision(repo, rev(name, up, day=i), [], {}, [], None, raised)
    assert _check_repo(store, repo) == [False]


def _linear_repo(store: Store, repo: RepoId, depth: int) -> list[str]:
    """`depth` revisions in a line; at every revision an advisory introduced there, fixed 5 later."""
    labels = [f"{repo.name}-{i}" for i in range(depth)]
    for i, label in enumerate(labels):
        events = [{"introduced": sha(label)}] + ([{"fixed": sha(labels[i + 5])}] if i + 5 < depth else [])
        record = AdvisoryRecord(f"x_D-{label}", repo, sha(label), _osv(repo, f"x_D-{label}", [events]), T0, None)
        assert store.save_revision(repo, rev(label, labels[i - 1] if i else None, day=i), [], {}, [], None, [record])
    return [sha(label) for label in labels]


def test_query_work_does_not_grow_with_depth(
    store: Store, decoded: list[str], count_selects: Callable[[Store], AbstractContextManager[list[str]]]
) -> None:
    app = create_app(Settings(database_url="sqlite://", osv_page_size=3), store)
    client = TestClient(app)
    figures = []
    for depth in (12, 150):
        repo = RepoId("deep", f"d{depth}")
        shas = _linear_repo(store, repo, depth)
        pin = shas[depth - 3]
        for body in ({"commit": pin}, {"commit": pin, "package": {"ecosystem": "GIT", "name": repo.url()}}):
            decoded.clear()
            with count_selects(store) as selects:
                answer = client.post("/v1/query", json=body)
            assert answer.status_code == 200
            ids = [v["id"] for v in answer.json()["vulns"]]
            assert ids == sorted(f"x_D-{repo.name}-{i}" for i in range(depth - 7, depth - 2))[:3]
            assert len(decoded) <= 3
            figures.append(len(selects))
    assert figures[:2] == figures[2:], figures


def test_the_events_are_read_once_per_history_version(
    store: Store, count_selects: Callable[[Store], AbstractContextManager[list[str]]]
) -> None:
    """A repo's events are read once per history version (into `storage.heldindex`); then every
    pin's answer reads none of them, at any depth, and equals the lineage walk's. Storing a
    revision (a new version) is seen by the next query."""
    for depth in (12, 150):
        repo = RepoId("closed", f"c{depth}")
        shas = _linear_repo(store, repo, depth)
        with store.engine.connect() as conn:
            repo_id = find_repo(conn, repo)
            assert repo_id is not None
            assert len(affecting_ids(conn, repo_id, shas[0])) == 1  # the version's index is built
        with store.engine.connect() as conn:
            expected = {pin: ids_by_lineage(conn, repo_id, pin) for pin in shas}
        with count_selects(store) as selects, store.engine.connect() as conn:
            answers = {pin: affecting_ids(conn, repo_id, pin) for pin in shas}
        assert answers == expected
        assert answers[shas[depth // 2]] == sorted(f"x_D-{repo.name}-{i}" for i in range(depth // 2 - 4, depth // 2 + 1))
        assert not [q for q in selects if "advisory_events" in q], "a query read the events again"
        new = f"{repo.name}-new"
        record = AdvisoryRecord(f"x_D-{new}", repo, sha(new), _osv(repo, f"x_D-{new}", [[{"introduced": "0"}]]), T0, None)
        assert store.save_revision(repo, rev(new, f"{repo.name}-{depth - 1}", day=depth), [], {}, [], None, [record])
        with store.engine.connect() as conn:
            assert f"x_D-{new}" in affecting_ids(conn, repo_id, shas[0])
            assert affecting_ids(conn, repo_id, shas[0]) == ids_by_lineage(conn, repo_id, shas[0])


_placed_event = st.tuples(st.sampled_from(["introduced", "introduced", "fixed", "last_affected", "limit"]),
                          st.sampled_from(["0", "*", "at", "at", "at", "off"]), st.integers(0, 24))


def _assert_stretches(events: list[tuple[str, str, int]]) -> None:
    placed = []
    for ordinal, (kind, value, at) in enumerate(events):
        text = "*" if value == "*" and kind == "limit" else "0" if value in ("0", "*") else sha(f"e{at}-{value}")
        position = at if value == "at" else None  # "off": a commit not stored on the line
        placed.append((GitEvent(0, ordinal, kind, text), None if text in ("0", "*") else position))
    found = stretches(placed)
    for pin in range(30):
        on_line = [(evt, -1 if evt.value == "0" else at if at is not None and at <= pin else None) for evt, at in placed]
        holding = [start for lo, hi, start in found if lo <= pin < hi]
        assert len(holding) <= 1, found
        if affects_at(on_line, pin):
            last = max((at for evt, at in on_line if evt.event == "introduced" and at is not None), default=0)
            assert holding == [max(0, last)], (pin, found)
        else:
            assert holding == [], (pin, found)
    index = HeldIndex([(lo, hi, "x", start) for lo, hi, start in found])
    for pin in range(30):
        assert index.held(pin) == {"x": s for lo, hi, s in found if lo <= pin < hi}


@settings(max_examples=400, deadline=None)
@given(events=st.lists(_placed_event, min_size=1, max_size=7))
def test_stretches_hold_exactly_where_the_range_affects(events: list[tuple[str, str, int]]) -> None:
    """A range's stretches are `affects_at` at every position of a line (and the last `introduced`
    at or before it), the pins past every event included."""
    _assert_stretches(events)


def test_every_range_of_one_or_two_events_is_stretched_exactly() -> None:
    """Every range of one or two events over four positions (the shapes hubwatch writes, and their
    edge cases: fixed where introduced, fixed before it, an end not on the line), exhaustively."""
    one = [(kind, value, at) for kind in ("introduced", "fixed", "last_affected", "limit")
           for value, at in [("0", 0), ("*", 0), ("off", 0), *(("at", p) for p in range(4))]]
    for first in one:
        _assert_stretches([first])
        for second in one:
            _assert_stretches([first, second])


def test_the_kept_indexes_stay_within_their_budget(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Indexes of more repos than the budget holds: the least recently used go, the answers stay right."""
    import hubwatch.storage.core.versioned as versioned

    monkeypatch.setattr(versioned, "MAX_UNITS", 45)
    repos = [RepoId("budget", f"b{n}") for n in range(4)]
    lines = {repo: _linear_repo(store, repo, 10) for repo in repos}  # 10 revisions and 10 stretches each
    for _ in range(2):
        for repo, shas in lines.items():
            with store.engine.connect() as conn:
                repo_id = find_repo(conn, repo)
                assert repo_id is not None
                assert affecting_ids(conn, repo_id, shas[7]) == ids_by_lineage(conn, repo_id, shas[7])
            kept = versioned._kept[store.engine]
            assert versioned.kept_units(store.engine) <= 45
            assert len(kept) < 2 * len(repos)  # some were dropped
            assert next(reversed(kept))[:2] == ("linear line", repo_id)  # the one just asked is kept
