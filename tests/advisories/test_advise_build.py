"""plan_advisories: record shape, schema validity, ids, direction per kind, thresholds, first revision."""

from __future__ import annotations

from dataclasses import replace

import re
from datetime import datetime, timedelta, timezone

import pytest

from hubwatch.settings import Settings
from hubwatch.domain.records import ChangeRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.domain.times import NaiveDatetime
from hubwatch.advisories.advise import plan_advisories
from hubwatch.advisories.osv import InvalidAdvisory, validate_osv
from osv_schema_check import assert_schema_valid

REPO = RepoId("acme", "llama")
SETTINGS = Settings(public_url="https://hubwatch.example")
DATE = datetime(2024, 3, 5, 12, 30, 15, tzinfo=timezone.utc)


def sha(n: int) -> str:
    return f"{n:040x}"


def rev(n: int, parent: int | None = None, date: datetime = DATE) -> RevisionRecord:
    return RevisionRecord(sha(n), sha(parent if parent is not None else n - 1), date, f"commit {n}")


def change(kind: Kind, severity: Severity, direction: str = "hazard", key: str | None = "k",
           old: object = 1, new: object = 2, file: str = "config.json", **extra: object) -> ChangeRecord:
    path = f"{file}:{key}" if key else file
    detail = {"file": file, "key": key, "old": old, "new": new, **extra}
    return ChangeRecord(kind, severity, path, f"{path} {old} → {new}", detail, direction)


def test_risk_record_shape_and_links() -> None:
    pickle = change(Kind.PICKLE, Severity.HIGH, key=None, file="pytorch_model.bin", old=None, new={"size": 9})
    [record] = plan_advisories(REPO, rev(2), [pickle], [], SETTINGS)
    osv = record.osv
    assert_schema_valid(osv)
    assert re.fullmatch(r"x_HUBWATCH-2024-[0-9a-f]{12}", record.id)
    assert osv["id"] == record.id and osv["schema_version"].startswith("1.7.")
    assert osv["published"] == osv["modified"] == "2024-03-05T12:30:15Z"
    assert record.modified == DATE and record.revision_sha == sha(2) and record.withdrawn is None
    url = "https://huggingface.co/acme/llama"
    assert osv["affected"] == [
        {"package": {"ecosystem": "GIT", "name": url},
         "ranges": [{"type": "GIT", "repo": url, "events": [{"introduced": sha(2)}]}]}
    ]
    assert {"type": "INTRODUCED", "url": f"{url}/commit/{sha(2)}"} in osv["references"]
    assert {"type": "WEB", "url": f"https://hubwatch.example/models/acme/llama/revisions/{sha(2)}"} in osv["references"]
    ds = osv["database_specific"]
    assert ds["kinds"] == ["pickle"] and ds["max_severity"] == "high" and ds["direction"] == "hazard"
    assert ds["changes"][0]["detail"]["file"] == "pytorch_model.bin"
    assert "pickle" in osv["summary"] and "acme/llama" in osv["summary"]
    assert "**high**" in osv["details"] and "pytorch_model.bin" in osv["details"]


def test_fix_record_marks_older_revisions() -> None:
    fix = change(Kind.CHAT_TEMPLATE, Severity.MEDIUM, "update", key="chat_template", file="tokenizer_config.json")
    [record] = plan_advisories(REPO, rev(7), [fix], [], SETTINGS)
    events = record.osv["affected"][0]["ranges"][0]["events"]
    assert events == [{"introduced": "0"}, {"fixed": sha(7)}]
    assert record.id.endswith("-fix")
    assert record.osv["references"][0]["type"] == "FIX"
    assert "before" in record.osv["details"]


@pytest.mark.parametrize(
    ("kind", "direction"),
    [(Kind.PICKLE, "hazard"), (Kind.CUSTOM_CODE, "hazard"), (Kind.LICENSE, "hazard"),
     (Kind.SPECIAL_TOKENS, "hazard"), (Kind.CHAT_TEMPLATE, "update"), (Kind.CONTEXT, "update")],
)
def test_direction_follows_the_change(kind: Kind, direction: str) -> None:
    [record] = plan_advisories(REPO, rev(3), [change(kind, Severity.HIGH, direction)], [], SETTINGS)
    events = record.osv["affected"][0]["ranges"][0]["events"]
    assert events[0] == ({"introduced": sha(3)} if direction == "hazard" else {"introduced": "0"})
    assert record.osv["database_specific"]["direction"] == direction


def test_commit_with_both_directions_splits_into_two_stable_records() -> None:
    risk = change(Kind.CUSTOM_CODE, Severity.HIGH, key="auto_map", old=None, new={"AutoModel": "m.X"})
    fix = change(Kind.CHAT_TEMPLATE, Severity.MEDIUM, "update", key="chat_template")
    records = plan_advisories(REPO, rev(4), [risk, fix], [], SETTINGS)
    assert len(records) == 2
    by_dir = {r.osv["database_specific"]["direction"]: r for r in records}
    assert by_dir["update"].id == by_dir["hazard"].id + "-fix"
    # the fix record's id does not depend on whether the commit also carried a risk
    [fix_alone] = plan_advisories(REPO, rev(4), [fix], [], SETTINGS)
    assert fix_alone.id == by_dir["update"].id


def test_first_revision_advises_only_the_hazards_it_carries() -> None:
    first = RevisionRecord(sha(1), None, DATE, "initial upload")
    template = change(Kind.CHAT_TEMPLATE, Severity.MEDIUM, "update", key="chat_template")
    assert plan_advisories(REPO, first, [template], [], SETTINGS) == []  # an update at the start is not news
    carried = replace(change(Kind.PICKLE, Severity.CRITICAL), severity=Severity.INFO)
    carried = replace(carried, detail={**carried.detail, "initial": True, "severity_if_changed": "critical"})
    [record] = plan_advisories(REPO, first, [carried, template], [], SETTINGS)
    ds = record.osv["database_specific"]
    assert ds["direction"] == "hazard" and ds["baseline"] is True and ds["max_severity"] == "critical"
    assert record.osv["affected"][0]["ranges"][0]["events"] == [{"introduced": sha(1)}]
    assert [c["kind"] for c in ds["changes"]] == ["pickle"]
    assert "from the first revision hubwatch stored" in record.osv["details"]
    # The oldest revision a backfill limit kept has a parent, but was compared with nothing: a baseline too.
    [kept] = plan_advisories(REPO, rev(5), [carried], [], SETTINGS)
    assert kept.osv["database_specific"]["baseline"] is True
    # Below the advise threshold, a baseline hazard is not advised either.
    low = replace(carried, detail={**carried.detail, "severity_if_changed": "low"})
    assert plan_advisories(REPO, first, [low], [], SETTINGS.model_copy(update={"advise_min_severity": "medium"})) == []


def test_info_only_commit_is_not_advised_even_when_threshold_is_info() -> None:
    info = change(Kind.METADATA, Severity.INFO, key="transformers_version", old="4.31.0", new="4.32.0")
    assert plan_advisories(REPO, rev(2), [info], [], SETTINGS) == []
    everything = Settings(advise_min_severity="info")
    assert plan_advisories(REPO, rev(2), [info], [], everything) == []


def test_threshold_setting_filters_changes() -> None:
    low = change(Kind.GENERATION_DEFAULTS, Severity.LOW, key="temperature", old=0.9, new=0.6)
    high = change(Kind.SPECIAL_TOKENS, Severity.HIGH, key="eos_token_id", old=2, new=[2, 32000])
    strict = Settings(advise_min_severity="medium")
    [record] = plan_advisories(REPO, rev(2), [low, high], [], strict)
    assert [c["kind"] for c in record.osv["database_specific"]["changes"]] == ["special_tokens"]
    assert plan_advisories(REPO, rev(2), [low], [], strict) == []
    [both] = plan_advisories(REPO, rev(2), [low, high], [], SETTINGS)
    assert len(both.osv["database_specific"]["changes"]) == 2
    with pytest.raises(ValueError, match="not a severity"):
        plan_advisories(REPO, rev(2), [low], [], Settings(advise_min_severity="urgent"))


def test_ids_are_deterministic_and_depend_on_repo_and_commit() -> None:
    c = [change(Kind.LICENSE, Severity.MEDIUM, key="license", old="apache-2.0", new="llama3.1")]
    a = plan_advisories(REPO, rev(5), c, [], SETTINGS)[0]
    b = plan_advisories(REPO, rev(5), c, [], SETTINGS)[0]
    assert a.osv == b.osv
    assert plan_advisories(RepoId("acme", "other"), rev(5), c, [], SETTINGS)[0].id != a.id
    assert plan_advisories(REPO, rev(6), c, [], SETTINGS)[0].id != a.id
    custom = Settings(advisory_prefix="x_ACME")
    assert plan_advisories(REPO, rev(5), c, [], custom)[0].id.startswith("x_ACME-2024-")


def test_timestamps_come_from_the_commit_not_the_clock() -> None:
    utc = datetime(2023, 12, 31, 23, 59, 59, tzinfo=timezone.utc)
    local = datetime(2024, 1, 1, 1, 0, 0, tzinfo=timezone(timedelta(hours=2)))
    c = [change(Kind.DTYPE, Severity.MEDIUM, key="torch_dtype", old="float32", new="bfloat16")]
    [a] = plan_advisories(REPO, rev(2, date=utc), c, [], SETTINGS)
    [b] = plan_advisories(REPO, rev(2, date=local), c, [], SETTINGS)
    assert a.osv["published"] == "2023-12-31T23:59:59Z"
    assert b.osv["published"] == "2023-12-31T23:00:00Z" and b.id.split("-")[1] == "2023"


def test_a_naive_commit_date_is_refused_naming_the_revision() -> None:
    """One rule for naive datetimes everywhere (hubwatch.domain.times): refused, never taken as UTC."""
    naive = datetime(2023, 12, 31, 23, 59, 59)
    c = [change(Kind.DTYPE, Severity.MEDIUM, key="torch_dtype", old="float32", new="bfloat16")]
    with pytest.raises(NaiveDatetime, match=f"date of revision {sha(2)} 2023-12-31T23:59:59 has no time zone"):
        plan_advisories(REPO, rev(2, date=naive), c, [], SETTINGS)


def test_estimate_deltas_are_carried() -> None:
    moved = ChangeRecord(Kind.CONFIG, Severity.MEDIUM, "estimate", "serving memory 13.5 → 14.0 GB",
                         {"file": "config.json", "key": None, "old": None, "new": None,
                          "serving_gb": {"old": 13.5, "new": 14.0}, "fit_changed": True}, "hazard")
    ctx = change(Kind.CONTEXT, Severity.MEDIUM, key="max_position_embeddings", old=2048, new=4096,
                 estimate_delta={"kv_cache_gb": {"old": 1.0, "new": 2.0}})
    [record] = plan_advisories(REPO, rev(2), [moved, ctx], [], SETTINGS)
    deltas = {d["path"]: d["delta"] for d in record.osv["database_specific"]["estimate_deltas"]}
    assert deltas["estimate"]["serving_gb"] == {"old": 13.5, "new": 14.0}
    assert deltas["config.json:max_position_embeddings"] == {"kv_cache_gb": {"old": 1.0, "new": 2.0}}
    assert "kv_cache_gb: 1.0 → 2.0" in record.osv["details"]


def test_hostile_text_stays_on_one_line() -> None:
    nasty = ChangeRecord(Kind.CARD, Severity.LOW, "README.md:license_name", "a\nb\x00c `d`",
                         {"file": "README.md", "key": "license_name", "old": "x", "new": "y\n\n# injected"}, "hazard")
    [record] = plan_advisories(REPO, RevisionRecord(sha(2), sha(1), DATE, "t\n# heading"), [nasty], [], SETTINGS)
    assert "\n# " not in record.osv["details"] and "\x00" not in record.osv["details"]
    assert "\n" not in record.osv["summary"]


def test_bad_inputs_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="x_"):  # refused when the settings are read …
        Settings(advisory_prefix="HFT")
    with pytest.raises(InvalidAdvisory, match="x_"):  # … and again where ids are made
        plan_advisories(
            REPO, rev(2), [change(Kind.PICKLE, Severity.HIGH)], [], Settings.model_construct(advisory_prefix="HFT")
        )
    with pytest.raises(ValueError, match="direction 'sideways'"):
        plan_advisories(REPO, rev(2), [change(Kind.PICKLE, Severity.HIGH, "sideways")], [], SETTINGS)
    with pytest.raises(InvalidAdvisory, match="not an absolute http"):
        plan_advisories(REPO, rev(2), [change(Kind.PICKLE, Severity.HIGH)], [], SETTINGS, web_url="localhost:8000")
    bad = {"id": "HFT-1", "modified": "yesterday"}
    with pytest.raises(InvalidAdvisory, match="fails the OSV schema"):
        validate_osv(bad)


def test_a_first_revision_whose_template_never_renders_carries_it_until_a_template_renders() -> None:
    """Issue 31: a template that never renders, from the first stored commit, is a baseline hazard
    (through the real diff engine), closed by the commit whose template renders again."""
    import json as _json

    from hubwatch.diff.engine import diff_snapshots
    from hubwatch.domain.records import FileRecord
    from hubwatch.domain.snapshot import Snapshot

    def snapshot(n: int, template: str) -> Snapshot:
        raw = _json.dumps({"chat_template": template, "eos_token": "</s>"}).encode()
        return Snapshot(sha=sha(n), files={"tokenizer_config.json": FileRecord("tokenizer_config.json", len(raw))},
                        contents={"tokenizer_config.json": raw})

    broken = snapshot(1, "{% for m in messages %}{{ m.content | no_such_filter }}{% endfor %}")
    first = plan_advisories(REPO, rev(1, parent=None), diff_snapshots(None, broken), [], SETTINGS)
    [record] = first
    ds = record.osv["database_specific"]
    assert ds["direction"] == "hazard" and ds["baseline"] is True
    assert [c["kind"] for c in ds["changes"]] == ["chat_template"]
    assert record.osv["affected"][0]["ranges"][0]["events"] == [{"introduced": sha(1)}]
    healed = snapshot(2, "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}")
    out = {r.id: r for r in plan_advisories(REPO, rev(2), diff_snapshots(broken, healed), first, SETTINGS)}
    closed = out[record.id]
    assert closed.osv["affected"][0]["ranges"][0]["events"] == [{"introduced": sha(1)}, {"fixed": sha(2)}]
    # a first revision whose template renders carries nothing of it
    fine = plan_advisories(REPO, rev(1, parent=None), diff_snapshots(None, healed), [], SETTINGS)
    assert all(r.osv["database_specific"]["direction"] != "hazard" for r in fine)
