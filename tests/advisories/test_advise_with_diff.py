"""plan_advisories fed by the real diff engine: reverts of pickles, custom code and config keys."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from hubwatch.settings import Settings
from hubwatch.domain.records import AdvisoryRecord, FileRecord, RepoId, RevisionRecord
from hubwatch.advisories.advise import plan_advisories
from hubwatch.diff import diff_snapshots
from hubwatch.domain.snapshot import Snapshot

REPO = RepoId("acme", "model")
CONFIG = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "vocab_size": 100, "max_position_embeddings": 2048}


def snapshot(n: int, config: dict[str, object], extra: dict[str, bytes] | None = None) -> Snapshot:
    contents = {"config.json": json.dumps(config).encode(), **(extra or {})}
    files = {p: FileRecord(p, len(b), blob_id=f"{hash(b) & 0xffffffff:040x}") for p, b in contents.items()}
    tracked = {p: b for p, b in contents.items() if not p.endswith(".bin")}
    return Snapshot(sha=f"{n:040x}", files=files, contents=tracked)


def replay(snapshots: list[Snapshot]) -> tuple[dict[str, AdvisoryRecord], list[list[AdvisoryRecord]]]:
    stored: dict[str, AdvisoryRecord] = {}
    per_commit = []
    previous = None
    for n, snap in enumerate(snapshots, start=1):
        revision = RevisionRecord(snap.sha, previous.sha if previous else None,
                                  datetime(2024, 1, 1, tzinfo=timezone.utc) + timedelta(days=n), f"c{n}")
        changes = diff_snapshots(previous, snap)
        out = plan_advisories(REPO, revision, changes, list(stored.values()), Settings())
        per_commit.append(out)
        stored.update({r.id: r for r in out})
        previous = snap
    return stored, per_commit


def events(record: AdvisoryRecord) -> list[dict[str, str]]:
    return record.osv["affected"][0]["ranges"][0]["events"]


def test_pickle_added_then_removed_closes_the_advisory() -> None:
    pickle = {"pytorch_model.bin": b"\x80\x04weights"}
    stored, per_commit = replay([snapshot(1, CONFIG), snapshot(2, CONFIG, pickle), snapshot(3, CONFIG)])
    assert per_commit[0] == []  # first revision: recorded, not advised
    [opened] = per_commit[1]
    assert "pickle" in opened.osv["database_specific"]["kinds"]
    assert [r.id for r in per_commit[2]] == [opened.id]
    assert events(stored[opened.id]) == [{"introduced": f"{2:040x}"}, {"fixed": f"{3:040x}"}]


def test_custom_code_added_then_removed_closes_the_advisory() -> None:
    code = {"modeling_x.py": b"import os\n"}
    stored, per_commit = replay([snapshot(1, CONFIG), snapshot(2, CONFIG, code), snapshot(3, CONFIG)])
    [opened] = [r for r in per_commit[1] if "custom_code" in r.osv["database_specific"]["kinds"]]
    assert opened.id in {r.id for r in per_commit[2]}
    assert events(stored[opened.id])[-1] == {"fixed": f"{3:040x}"}


def test_config_value_reverted_closes_the_advisory() -> None:
    shorter = {**CONFIG, "max_position_embeddings": 1024}  # a shorter context: a risk
    stored, per_commit = replay([snapshot(1, CONFIG), snapshot(2, shorter), snapshot(3, CONFIG)])
    [opened] = per_commit[1]
    assert opened.osv["database_specific"]["direction"] == "hazard"
    assert "context" in opened.osv["database_specific"]["kinds"]
    assert opened.id in {r.id for r in per_commit[2]}
    assert events(stored[opened.id])[-1] == {"fixed": f"{3:040x}"}
    assert all(r.osv["database_specific"]["direction"] == "hazard" for r in stored.values())  # no extra fix record


def test_a_different_config_value_leaves_the_advisory_open() -> None:
    shorter = {**CONFIG, "max_position_embeddings": 1024}
    shortest = {**CONFIG, "max_position_embeddings": 512}
    stored, per_commit = replay([snapshot(1, CONFIG), snapshot(2, shorter), snapshot(3, shortest)])
    [opened] = per_commit[1]
    assert events(stored[opened.id]) == [{"introduced": f"{2:040x}"}]
    assert len(stored) == 2
