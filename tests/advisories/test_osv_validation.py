"""validate_osv: the compiled schema on the write path decides as jsonschema does, and says what jsonschema says."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hubwatch.settings import Settings
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, Direction, Kind, RepoId, RevisionRecord, Severity
from hubwatch.advisories.advise import plan_advisories
from hubwatch.advisories.osv import InvalidAdvisory, validate_osv
from hubwatch.advisories.osv_export import export_files
from osv_schema_check import assert_schema_valid, schema_errors

REPO = RepoId("acme", "llama")
DATE = datetime(2024, 3, 5, tzinfo=timezone.utc)


def _record(n: int = 2, kind: Kind = Kind.PICKLE, direction: Direction = Direction.HAZARD) -> AdvisoryRecord:
    change = ChangeRecord(kind, Severity.HIGH, "config.json:k", "k 1 → 2",
                          {"file": "config.json", "key": "k", "old": 1, "new": 2}, direction)
    [out] = plan_advisories(REPO, RevisionRecord(f"{n:040x}", f"{n - 1:040x}", DATE, "c"), [change], [], Settings())
    return out


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON value (keys and list indexes), the root excluded."""
    found: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        found.append((*at, key))
        found.extend(_paths(inner, (*at, key)))
    return found


def _set(record: dict[str, Any], path: tuple[Any, ...], new: Any) -> None:
    target = record
    for key in path[:-1]:
        target = target[key]
    if new is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = new


_DELETE = object()
_VALUES = st.one_of(
    st.just(_DELETE), st.none(), st.booleans(), st.integers(-2, 2), st.floats(allow_nan=False), st.text(max_size=12),
    st.sampled_from(["0", "x_A-1", "2024-03-05T00:00:00Z", "2024-03-05T00:00:00Z\n", "GIT", "SEMVER", "a" * 40,
                     "A" * 40, "\u0661" * 40, "ADVISORY", "https://example.com/x", ":\r", ":x", "x_\n"]),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.sampled_from(["introduced", "fixed", "x"]),
                                                          st.sampled_from(["0", "a" * 40, 1]), max_size=2),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), which=st.sampled_from([(2, Direction.HAZARD), (3, Direction.UPDATE)]))
def test_the_write_path_check_refuses_exactly_what_jsonschema_refuses(data: st.DataObject, which: tuple[int, Direction]) -> None:
    """A built record with one value changed or removed (up to three times): validate_osv raises
    when, and only when, jsonschema finds the record invalid (or a reference URL is not http(s))."""
    record = copy.deepcopy(_record(which[0], direction=which[1]).osv)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(record)
        if not paths:
            break
        _set(record, data.draw(st.sampled_from(paths)), data.draw(_VALUES))
    errors = schema_errors(record)
    refs = record.get("references")
    bad_url = isinstance(refs, list) and any(
        not (isinstance(r, dict) and isinstance(r.get("url"), str) and r["url"].startswith(("http://", "https://")))
        for r in refs)
    if errors or bad_url:
        with pytest.raises(InvalidAdvisory, match="fails the OSV schema") as caught:
            validate_osv(record)
        for line in errors[:10]:
            path, _, message = line.partition(": ")
            assert f"at {path}: {message}" in str(caught.value)
    else:
        validate_osv(record)


def test_a_value_json_has_no_type_for_is_judged_by_jsonschema() -> None:
    record = dict(_record().osv)
    record["database_specific"] = {**record["database_specific"], "when": DATE}  # not JSON: a datetime
    validate_osv(record)  # the schema leaves database_specific open; jsonschema accepts it, so do we
    with pytest.raises(InvalidAdvisory, match="at /modified"):
        validate_osv({**record, "modified": DATE})


def test_an_invalid_record_is_caught_on_the_write_path_and_at_export() -> None:
    """A record a plan would update, corrupted in store (an event that is no commit): the update
    plan_advisories writes is refused with jsonschema's words, and the export refuses it too."""
    first = _record(2)
    corrupt = copy.deepcopy(first.osv)
    corrupt["affected"][0]["ranges"][0]["events"][0]["introduced"] = "not-a-commit"
    earlier = AdvisoryRecord(first.id, first.repo, first.revision_sha, corrupt, first.modified)
    undo = ChangeRecord(Kind.PICKLE, Severity.HIGH, "config.json:k", "k 2 → 1",
                        {"file": "config.json", "key": "k", "old": 2, "new": 1, "reverts": first.id}, Direction.UPDATE)
    with pytest.raises(InvalidAdvisory, match=f"{first.id}.* fails the OSV schema:\n  at /affected/0/ranges/0/events/0"):
        plan_advisories(REPO, RevisionRecord(f"{3:040x}", f"{2:040x}", DATE, "c"), [undo], [earlier], Settings(),
                        carried=[earlier])
    with pytest.raises(InvalidAdvisory, match="/affected/0/ranges/0/events/0"):
        export_files([earlier])
    assert_schema_valid(first.osv)
    json.dumps(first.osv)
