"""The vocabulary as enums defined once: Direction and PollState, their text, and who checks them."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from hubwatch.advisories.osv import advisory_id
from hubwatch.diff.changes import HAZARD, UPDATE, make_change
from hubwatch.domain.records import ChangeRecord, Direction, Kind, PollState, RepoId, Severity
from hubwatch.storage import Store
from hubwatch.storage.errors import InvalidRecord
from hubwatch.storage.core.validate import check_change

REPO = RepoId("acme", "llama")
T0 = datetime(2024, 5, 1, 12, tzinfo=UTC)


def test_values_are_the_stored_text() -> None:
    assert [d.value for d in Direction] == ["hazard", "update"]
    assert [s.value for s in PollState] == ["new", "ok", "gated", "not_found", "disabled", "error"]
    for member in (*Direction, *PollState):
        assert member == member.value and str(member) == f"{member}" == member.value  # prints as stored
        assert json.dumps({"x": member}) == json.dumps({"x": member.value})
        assert {member.value: 1}.get(member) == 1  # dict lookups by the text still hit


def test_parse_accepts_members_and_text_and_names_bad_values() -> None:
    assert Direction.parse("update") is Direction.UPDATE and Direction.parse(Direction.HAZARD) is Direction.HAZARD
    assert PollState.parse("not_found") is PollState.NOT_FOUND
    with pytest.raises(ValueError, match="change 'a.json' has direction 'sideways': expected 'hazard' or 'update'"):
        Direction.parse("sideways", "change 'a.json'")
    with pytest.raises(ValueError, match="poll state 'fine' is not one of new, ok, gated, not_found, disabled, error"):
        PollState.parse("fine")


def test_the_diff_engine_speaks_the_enum() -> None:
    assert (HAZARD, UPDATE) == (Direction.HAZARD, Direction.UPDATE)
    change = make_change(Kind.CONTEXT, Severity.LOW, file="config.json", key="k", old=1, new=2,
                         summary="s", direction=UPDATE)
    assert change.direction is Direction.UPDATE and change.detail["direction"] == "update"
    assert ChangeRecord(Kind.CARD, Severity.INFO, "README.md", "s").direction is Direction.UPDATE  # hazards are said explicitly
    with pytest.raises(ValueError, match="change of config.json has direction 'up'"):
        make_change(Kind.CONTEXT, Severity.LOW, file="config.json", key="k", old=1, new=2, summary="s",
                    direction="up")  # type: ignore[arg-type]


def test_one_direction_rule_for_store_and_advisories() -> None:
    good = ChangeRecord(Kind.CARD, Severity.LOW, "README.md", "s", {}, Direction.UPDATE)
    assert check_change(good, 0)[2] == "update"
    assert check_change(replace(good, direction="hazard"), 0)[2] == "hazard"  # type: ignore[arg-type]
    bad = replace(good, direction="sideways")  # type: ignore[arg-type]
    with pytest.raises(InvalidRecord, match="has direction 'sideways': expected 'hazard' or 'update'"):
        check_change(bad, 3)
    with pytest.raises(ValueError, match="has direction 'sideways': expected 'hazard' or 'update'"):
        advisory_id("x_HUBWATCH", REPO, "a" * 40, 2024, "sideways")  # type: ignore[arg-type]
    assert advisory_id("x_HUBWATCH", REPO, "a" * 40, 2024, Direction.UPDATE).endswith("-fix")
    assert advisory_id("x_HUBWATCH", REPO, "a" * 40, 2024, "update") == advisory_id(  # type: ignore[arg-type]
        "x_HUBWATCH", REPO, "a" * 40, 2024, Direction.UPDATE)


def test_poll_states_round_trip_through_the_store_as_enums(store: Store) -> None:
    assert store.watch(REPO)
    state = store.repo_state(REPO)
    assert state is not None and state.state is PollState.NEW
    store.repos.record_poll(REPO, PollState.GATED, None, T0)
    state = store.repo_state(REPO)
    assert state is not None and state.state is PollState.GATED and state.failures == 1  # backs off too
    store.repos.record_poll(REPO, "error", "boom", T0)  # text is accepted at the edge
    state = store.repo_state(REPO)
    assert state is not None and state.state is PollState.ERROR and state.failures == 2
    store.repos.record_poll(REPO, PollState.OK, None, T0)
    state = store.repo_state(REPO)
    assert state is not None and state.failures == 0  # only a good poll resets the count
    with pytest.raises(InvalidRecord, match="poll state 'fine' is not one of"):
        store.repos.record_poll(REPO, "fine", None, T0)
