"""The inheritance planner on its own (pure): generation defaults and special tokens item by item,
a hazard of the base, absent files, determinism; and a re-derivation leaves inherited records alone."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import jsonschema
from derivatives_scenario import BASE, STALE, Scenario, scenario  # noqa: F401  (the fixture)

from hubwatch.advisories.advise import plan_advisories
from hubwatch.advisories.inherit import plan_inherited
from hubwatch.advisories.osv import schema
from hubwatch.diff import diff_snapshots
from hubwatch.domain.records import AdvisoryRecord, RepoId, RevisionRecord
from hubwatch.domain.snapshot import Snapshot
from hubwatch.settings import Settings
from hubwatch.tracker.rederive import rederive_repo

SETTINGS = Settings(database_url="sqlite://")
UP = RepoId.parse("up/base")
DOWN = RepoId.parse("down/tune")


def _snap(sha: str, **files: object) -> Snapshot:
    from hubwatch.domain.records import FileRecord

    contents = {p: json.dumps(v).encode() for p, v in files.items()}
    return Snapshot(sha=sha, files={p: FileRecord(p, len(b), sha[:8] + p, None) for p, b in contents.items()},
                    contents=contents)


def _base_record(before: Snapshot, after: Snapshot) -> AdvisoryRecord:
    revision = RevisionRecord(after.sha, before.sha, datetime(2025, 4, 1, tzinfo=timezone.utc), "fix eos")
    changes = diff_snapshots(before, after)
    (record,) = [r for r in plan_advisories(UP, revision, changes, [], SETTINGS)]
    return record


def _plan(record: AdvisoryRecord, before: Snapshot, after: Snapshot, mine: Snapshot, prior: AdvisoryRecord | None = None) -> object:
    head = RevisionRecord(mine.sha, None, datetime(2025, 5, 1, tzinfo=timezone.utc), "upload")
    return plan_inherited(derivative=DOWN, relation="quantized", head=head, snapshot=mine, carried_since=lambda: mine.sha,
                          base_record=record, before=before, after=after, prior=prior, settings=SETTINGS)


def test_generation_defaults_item_by_item() -> None:
    before = _snap("a" * 40, **{"generation_config.json": {"eos_token_id": 2, "temperature": 0.6}})
    after = _snap("b" * 40, **{"generation_config.json": {"eos_token_id": [2, 32007], "temperature": 0.7}})
    record = _base_record(before, after)
    assert record.osv["database_specific"]["kinds"] == ["special_tokens", "generation_defaults"]
    stale = _plan(record, before, after, _snap("c" * 40, **{"generation_config.json": {"eos_token_id": 2, "temperature": 0.9}}))
    assert stale.status == "stale" and stale.record is not None  # type: ignore[attr-defined]
    osv = stale.record.osv  # type: ignore[attr-defined]
    jsonschema.validate(osv, schema())
    # eos_token_id is the base's old one (stale); temperature its own (not advised)
    assert osv["upstream"] == [record.id] and osv["summary"].startswith(f"{DOWN} still carries the special tokens")
    (entry,) = osv["database_specific"]["changes"]
    assert entry["path"] == "generation_config.json:eos_token_id" and "32007" in entry["detail"]["text_diff"]
    again = _plan(record, before, after, _snap("c" * 40, **{"generation_config.json": {"eos_token_id": 2, "temperature": 0.9}}))
    assert again.record == stale.record  # type: ignore[attr-defined]  # deterministic
    matches = _plan(record, before, after, _snap("d" * 40, **{"generation_config.json": {"eos_token_id": [2, 32007], "temperature": 0.7}}))
    assert matches.status == "matches" and matches.record is None  # type: ignore[attr-defined]
    own = _plan(record, before, after, _snap("e" * 40, **{"generation_config.json": {"eos_token_id": 7}}))
    assert own.status == "own" and own.record is None  # type: ignore[attr-defined]
    absent = _plan(record, before, after, _snap("f" * 40, **{"config.json": {"model_type": "llama"}}))
    assert absent.status == "absent" and absent.record is None  # type: ignore[attr-defined]
    # The open record closes once the derivative no longer carries the old value.
    closed = _plan(record, before, after, _snap("9" * 40, **{"generation_config.json": {"eos_token_id": 7}}),
                   prior=stale.record)  # type: ignore[attr-defined]
    events = closed.record.osv["affected"][0]["ranges"][0]["events"]  # type: ignore[attr-defined]
    assert events == [{"introduced": "c" * 40}, {"fixed": "9" * 40}]


def test_a_hazard_of_the_base_is_inherited_by_whoever_copied_it() -> None:
    good = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    broken = "{{ raise_exception('no prompts today') }}"
    before = _snap("1" * 40, **{"tokenizer_config.json": {"eos_token": "</s>", "chat_template": good}})
    after = _snap("2" * 40, **{"tokenizer_config.json": {"eos_token": "</s>", "chat_template": broken}})
    record = _base_record(before, after)
    assert record.osv["database_specific"]["direction"] == "hazard"
    copied = _plan(record, before, after, _snap("3" * 40, **{"tokenizer_config.json": {"chat_template": broken}}))
    assert copied.status == "stale" and "flagged" in copied.note  # type: ignore[attr-defined]
    jsonschema.validate(copied.record.osv, schema())  # type: ignore[attr-defined]
    kept = _plan(record, before, after, _snap("4" * 40, **{"tokenizer_config.json": {"chat_template": good}}))
    assert kept.status == "matches"  # type: ignore[attr-defined]


def test_rederiving_the_derivative_keeps_its_inherited_advisory(scenario: Scenario) -> None:
    scenario.advance(BASE)
    (before,) = [a for a in scenario.store.advisories.records(STALE) if a.id.endswith("-inherited")]
    rederive_repo(scenario.store, STALE, scenario.settings)
    (after,) = [a for a in scenario.store.advisories.records(STALE) if a.id.endswith("-inherited")]
    assert after.withdrawn is None and after.osv == before.osv
