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
from hubwatch.storage.osvmatch import affecting_ids, ids_by_lineage, is_linear
from hubwatch.storage.repos import find_repo
from storage_helpers import T0, rev, sha

_names = itertools.count()


def _check_repo(store: Store, repo: RepoId) -> list[bool]:
    """Every stored revision's answer by the index equals the lineage walk's; the linear flags seen."""
    with store.engine.connect() as conn:
        repo_id = find_repo(conn, repo)
        assert repo_id is not None
        shas = [s for s in store.revision_shas(repo) or []]
        shas += [e.revision.sha for e in store.history(repo) if e.revision.sha not in shas]
        for full in shas:
            assert affecting_ids(conn, repo_id, full) == ids_by_lineage(conn, repo_id, full), full
            assert store.advisory_ids_affecting(repo, full) == ids_by_lineage(conn, repo_id, full)
        return [is_linear(conn, repo_id)]


def test_seeded_store_answers_as_the_lineage_walk(advised_store_url: str) -> None:
    with Store.open(advised_store_url) as store:
        for repo in (RepoId("acme", "llama-small"), RepoId("acme", "tiny")):
            assert _check_repo(store, repo) == [True]
        for _repo, advisory_id in store.advisory_ids_for_commit(sha("never")):
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


def test_ranges_closed_before_the_pin_are_not_read(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The events the matcher reads and decides on are those of the ranges still open at the pin
    (5 here, each fixed 5 revisions after it was introduced), at any depth: ranges a `fixed` closed
    before the pin stay in the database."""
    import hubwatch.storage.osvmatch as osvmatch

    read: list[int] = []
    original = osvmatch._ranges

    def counting(rows: Any) -> Any:
        rows = list(rows)
        read.append(len(rows))
        return original(rows)

    monkeypatch.setattr(osvmatch, "_ranges", counting)
    for depth in (12, 150):
        repo = RepoId("closed", f"c{depth}")
        shas = _linear_repo(store, repo, depth)
        with store.engine.connect() as conn:
            repo_id = find_repo(conn, repo)
            assert repo_id is not None
            read.clear()
            hits = affecting_ids(conn, repo_id, shas[depth // 2])
            assert hits == ids_by_lineage(conn, repo_id, shas[depth // 2])
        assert len(hits) == 5
        assert read == [10]  # the five open ranges' introduced and fixed events, nothing older
