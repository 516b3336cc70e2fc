"""Issue 9's model on every real history: a pin at the latest revision is affected only by the
hazards that revision carries (tests/advisories/golden/latest_hazards.json, reviewed by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from history_advice import affecting, replay_advice

from diff_histories import all_histories

GOLDEN = Path(__file__).resolve().parent / "golden" / "latest_hazards.json"
HISTORIES = all_histories()


def latest_hazards(history: Path) -> list[dict[str, object]]:
    replayed = replay_advice(history)
    found = []
    for record in affecting(replayed, replayed.versions[-1]):
        ds = record.osv["database_specific"]
        found.append({
            "version": replayed.versions[replayed.shas.index(record.revision_sha)],
            "direction": ds["direction"],
            "kinds": ds["kinds"],
            "changes": sorted(c["path"] for c in ds["changes"] if not c.get("reverted_by")),
        })  # fmt: skip
    return sorted(found, key=lambda f: (str(f["version"]), str(f["kinds"])))


def test_the_golden_covers_every_history() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert sorted(golden["histories"]) == sorted(h.name for h in HISTORIES)


@pytest.mark.parametrize("history", HISTORIES, ids=lambda p: p.name)
def test_the_latest_revision_is_affected_only_by_the_hazards_it_carries(history: Path) -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))["histories"][history.name]
    found = latest_hazards(history)
    assert all(f["direction"] == "hazard" for f in found), "an update never affects the revision it is in or later"
    assert found == golden["hazards"], f"{history.name}: review, then update {GOLDEN.name} by hand"


if __name__ == "__main__":  # prints the current answers, to review against the golden file
    print(json.dumps({h.name: latest_hazards(h) for h in HISTORIES}, indent=1))
