"""plan_advisories fed by the real diff engine: reverts of pickles, custom code and config keys."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from hubwatch.settings import Settings
from hubwatch.domain.records import AdvisoryRecord, FileRecord, RepoId, RevisionRecord
from hubwatch.advisories.advise import plan_advisories
from hubwatch.diff import diff_snapshots
from hubwatch.domain.snapshot import Snapshot
from osv_schema_check import assert_schema_valid

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
        for record in out:
            assert_schema_valid(record.osv)
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


def test_a_removed_eos_token_restored_closes_the_hazard() -> None:
    with_eos = {**CONFIG, "eos_token_id": 2}
    stored, per_commit = replay([snapshot(1, with_eos), snapshot(2, CONFIG), snapshot(3, with_eos)])
    [opened] = per_commit[1]
    assert opened.osv["database_specific"]["direction"] == "hazard"
    assert "special_tokens" in opened.osv["database_specific"]["kinds"]
    assert [r.id for r in per_commit[2]] == [opened.id]
    assert events(stored[opened.id])[-1] == {"fixed": f"{3:040x}"}
    assert len(stored) == 1  # the restoring change is not advised again


def test_a_neutral_change_is_an_update_and_its_revert_another_linked_update() -> None:
    """A shorter context used to be a risk that stayed open for every later revision (issue 9)."""
    shorter = {**CONFIG, "max_position_embeddings": 1024}
    stored, per_commit = replay([snapshot(1, CONFIG), snapshot(2, shorter), snapshot(3, CONFIG)])
    [first] = per_commit[1]
    assert first.osv["database_specific"]["direction"] == "update"
    assert events(first) == [{"introduced": "0"}, {"fixed": f"{2:040x}"}]
    second = next(r for r in per_commit[2] if r.revision_sha == f"{3:040x}")
    assert events(second) == [{"introduced": "0"}, {"fixed": f"{3:040x}"}]
    assert stored[first.id].osv["related"] == [second.id] and second.osv["related"] == [first.id]
    assert all(r.osv["database_specific"]["direction"] == "update" for r in stored.values())


def test_a_template_that_renders_again_closes_the_hazard() -> None:
    good = b"{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    broken = b"{{ raise_exception('no') }}" + good
    healed = good + b"<end>"  # not the old text: the prompts render again, that closes it
    stored, per_commit = replay([snapshot(n, CONFIG, {"chat_template.jinja": t}) for n, t in enumerate((good, broken, healed), 1)])
    [opened] = per_commit[1]
    assert opened.osv["database_specific"]["direction"] == "hazard"
    assert opened.id in {r.id for r in per_commit[2]}
    assert events(stored[opened.id]) == [{"introduced": f"{2:040x}"}, {"fixed": f"{3:040x}"}]
