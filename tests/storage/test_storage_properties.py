"""Property tests: any JSON detail and estimate round-trips through the store unchanged."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

from hubwatch.storage import Store
from hubwatch.domain.records import ChangeRecord, Kind, RepoId, Severity
from hubwatch.storage.core.validate import clean_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from storage_helpers import rev

REPO = RepoId("org", "props")

# Any code point, NUL and lone surrogates included: remote JSON can hold them ("\\ud800", "\\u0000").
# (Only high surrogates: a high then a low one is a pair, which JSON itself reads back as one
# astral character, and json.loads never produces such a split pair in the first place.)
any_text = st.text(max_size=12) | st.text(alphabet=st.sampled_from("a\x00\ud800\udbff\u2192\U0001f600"), max_size=6)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | any_text
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=12,
)
details = st.fixed_dictionaries(
    {"file": st.text(max_size=20), "key": st.none() | st.text(max_size=20), "old": json_values, "new": json_values},
    optional={"extra": json_values},
)
changes = st.builds(
    ChangeRecord,
    kind=st.sampled_from(Kind),
    severity=st.sampled_from(Severity),
    path=any_text,
    summary=any_text,
    detail=details,
    direction=st.sampled_from(["hazard", "update"]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(changes, max_size=3), estimate=st.dictionaries(st.text(max_size=8), json_values, max_size=4))
def test_changes_and_estimates_round_trip(store: Store, changes: list[ChangeRecord], estimate: dict[str, Any]) -> None:
    label = f"example-{next(COUNTER)}"
    assert store.save_revision(REPO, rev(label), [], {}, changes, ("v", estimate), [])
    entry = store.revision(REPO, rev(label).sha)
    assert entry is not None
    # Text columns replace what no backend can hold (NUL, lone surrogates); JSON keeps everything.
    assert entry.changes == [replace(c, path=clean_text(c.path), summary=clean_text(c.summary)) for c in changes]
    assert [c.detail for c in entry.changes] == [c.detail for c in changes]
    assert [c.direction for c in entry.changes] == [c.direction for c in changes]
    assert entry.estimate == estimate


COUNTER = itertools.count()
