"""The standing of a pin: updates lacked, hazards carried, the suggestion; ranges as /v1/query reads them."""

from __future__ import annotations

from datetime import UTC, datetime

from hubwatch.advisories.gitrange import affected_along
from hubwatch.domain.gitrange import GitEvent, Lineage, range_affects
from hubwatch.advisories.standing import standing, template_diffs
from hubwatch.domain.records import AdvisoryRecord, RepoId
from hypothesis import given
from hypothesis import strategies as st

__all__: list[str] = []

REPO = RepoId("org", "model")
SHAS = [f"{i:040x}" for i in range(1, 13)]
WHEN = datetime(2024, 1, 1, tzinfo=UTC)


def record(ident: str, direction: str, at: str, severity: str = "high", fixed: str | None = None,
           withdrawn: bool = False, detail: dict[str, object] | None = None) -> AdvisoryRecord:  # fmt: skip
    if direction == "update":
        events: list[dict[str, str]] = [{"introduced": "0"}, {"fixed": at}]
    else:
        events = [{"introduced": at}] + ([{"fixed": fixed}] if fixed else [])
    osv = {
        "id": ident,
        "summary": f"{ident} summary",
        "affected": [{"ranges": [{"type": "GIT", "repo": "https://huggingface.co/org/model", "events": events}]}],
        "database_specific": {
            "direction": direction,
            "kinds": ["chat_template"],
            "max_severity": severity,
            "changes": [{"kind": "chat_template", "severity": severity, "path": "chat_template.jinja",
                         "direction": direction, "detail": detail or {}}],  # fmt: skip
        },
    }
    return AdvisoryRecord(ident, REPO, at, osv, WHEN, WHEN if withdrawn else None)


def test_unknown_commit_is_not_known() -> None:
    result = standing(SHAS, [record("U", "update", SHAS[3])], "f" * 40)
    assert not result.known and result.lacks == () and result.suggested is None
    assert result.to_json()["known"] is False


def test_update_lacked_before_and_not_after() -> None:
    upd = record("U", "update", SHAS[3], "medium")
    before = standing(SHAS, [upd], SHAS[2])
    assert [a.id for a in before.lacks] == ["U"] and before.carries == ()
    assert before.suggested == SHAS[-1] and before.resolves == ("U",)
    assert [a.id for a in before.on_the_way] == ["U"]
    assert standing(SHAS, [upd], SHAS[3]).lacks == ()


def test_hazard_carried_until_fixed_and_suggestion_skips_it() -> None:
    haz = record("H", "hazard", SHAS[4], "high", fixed=SHAS[7])
    late = record("H2", "hazard", SHAS[10], "critical")
    result = standing(SHAS, [haz, late], SHAS[5])
    assert [a.id for a in result.carries] == ["H"]
    assert result.suggested == SHAS[9]  # the newest revision without an open hazard
    assert result.resolves == ("H",)
    newest = standing(SHAS, [haz, late], SHAS[-1])
    assert [a.id for a in newest.carries] == ["H2"] and newest.suggested == SHAS[9]
    ignoring = standing(SHAS, [haz, late], SHAS[-1], frozenset({"H2"}))
    assert ignoring.ignored == ("H2",) and ignoring.suggested is None
    assert ignoring.to_json()["carries"][0]["ignored"] is True


def test_clean_pin_moves_forward_only_to_a_clean_revision() -> None:
    late = record("H", "hazard", SHAS[10])
    result = standing(SHAS, [late], SHAS[4])
    assert result.carries == () and result.suggested is None  # nothing affects it: nothing to move for
    upd = record("U", "update", SHAS[6])
    result = standing(SHAS, [late, upd], SHAS[4])
    assert result.suggested == SHAS[9] and result.resolves == ("U",)


def test_withdrawn_never_counts() -> None:
    result = standing(SHAS, [record("H", "hazard", SHAS[0], withdrawn=True)], SHAS[5])
    assert result.carries == () and result.suggested is None


def test_most_severe_first_and_template_diff_given() -> None:
    detail = {"template": "default", "rendered_diff": {"multi_turn": {"old": "ok", "new": "ok", "diff": "-a\n+b\n"}}}
    recs = [record("A", "update", SHAS[6], "low"), record("B", "update", SHAS[7], "critical", detail=detail)]
    result = standing(SHAS, recs, SHAS[0])
    assert [a.id for a in result.lacks] == ["B", "A"]
    way = result.to_json()["on_the_way"]
    assert way[0]["id"] == "B" and way[0]["chat_template"][0]["diff"] == "-a\n+b\n"
    assert template_diffs(recs[0]) == ()


_events = st.lists(
    st.tuples(st.sampled_from(["introduced", "fixed", "last_affected", "limit"]),
              st.sampled_from(["0", "*", *SHAS[:6], "e" * 40])),  # fmt: skip
    max_size=6,
)


@given(_events)
def test_affected_along_agrees_with_range_affects(raw: list[tuple[str, str]]) -> None:
    events = [GitEvent(0, i, kind, value) for i, (kind, value) in enumerate(raw)]
    line = SHAS[:6]
    along = affected_along(events, line)
    assert along == [range_affects(events, Lineage(tuple(line[: i + 1]))) for i in range(len(line))]


_records = st.lists(
    st.tuples(st.sampled_from(["update", "hazard"]), st.integers(0, 11), st.none() | st.integers(0, 11),
              st.sampled_from(["low", "high"])),  # fmt: skip
    max_size=6,
).map(
    lambda rows: [
        record(f"R{i}", d, SHAS[a], s, fixed=SHAS[f] if d == "hazard" and f is not None and f > a else None)
        for i, (d, a, f, s) in enumerate(rows)
    ]
)


@given(_records)
def test_newest_pin_is_affected_only_by_hazards_it_carries(recs: list[AdvisoryRecord]) -> None:
    result = standing(SHAS, recs, SHAS[-1])
    assert result.lacks == ()
    assert all(a.osv["database_specific"]["direction"] == "hazard" for a in result.carries)


@given(_records, st.integers(0, 11))
def test_ignoring_everything_suggests_the_newest(recs: list[AdvisoryRecord], at: int) -> None:
    result = standing(SHAS, recs, SHAS[at], frozenset(r.id for r in recs))
    affected = bool(result.lacks or result.carries)
    assert result.suggested == (SHAS[-1] if at != 11 and affected else None)
    assert set(result.ignored) == {a.id for a in result.lacks + result.carries}


@given(_records, st.integers(0, 11))
def test_suggestion_carries_no_open_hazard(recs: list[AdvisoryRecord], at: int) -> None:
    result = standing(SHAS, recs, SHAS[at])
    if result.suggested is not None:
        there = standing(SHAS, recs, result.suggested)
        assert there.carries == () and there.suggested is None
        assert set(result.resolves) <= {a.id for a in result.lacks + result.carries}
