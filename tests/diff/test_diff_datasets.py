"""Dataset change kinds (docs/changes.md, *Datasets*) on the synthetic and the real dataset histories."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from hubwatch.diff import diff_dataset_snapshots
from hubwatch.diff.dataset_meta import dataset_meta
from hubwatch.domain.records import ChangeRecord, Direction, Kind, Severity
from hubwatch.domain.snapshot import Snapshot

from dataset_histories import EMOTION, GOLDEN, IMDB, REVIEWS, all_dataset_histories, dataset_golden, dataset_versions

V = dataset_versions(REVIEWS)


def _diff(a: str, b: str) -> list[ChangeRecord]:
    return diff_dataset_snapshots(V[a], V[b])


def _one(records: list[ChangeRecord], kind: Kind, op: str) -> ChangeRecord:
    found = [r for r in records if r.kind is kind and r.detail.get("op") == op]
    assert len(found) == 1, [(r.kind.value, r.detail.get("op"), r.summary) for r in records]
    return found[0]


def _kinds(records: list[ChangeRecord]) -> set[tuple[str, str, str]]:
    return {(r.kind.value, r.severity.value, r.direction.value) for r in records}


def test_unchanged_revision_has_no_changes() -> None:
    for snapshot in V.values():
        assert diff_dataset_snapshots(snapshot, snapshot) == []


def test_first_revision_is_all_info() -> None:
    records = diff_dataset_snapshots(None, V["v1"])
    assert records and all(r.severity is Severity.INFO and r.detail["initial"] for r in records)
    added = _one(records, Kind.SUBSETS, "added")
    assert added.detail["severity_if_changed"] == "low" and added.detail["config"] == "default"


def test_column_added_low_and_widened_retype_medium() -> None:
    records = _diff("v2", "v3")
    added = _one(records, Kind.SCHEMA, "added")
    assert (added.severity, added.direction) == (Severity.LOW, Direction.UPDATE)
    assert added.path == "README.md:dataset_info.default.features.title" and added.detail["new"]["type"] == "string"
    retyped = _one(records, Kind.SCHEMA, "retyped")
    assert retyped.severity is Severity.MEDIUM and "int32 → float32" in retyped.summary  # numeric to numeric


def test_retype_across_families_is_high() -> None:
    retyped = _one(_diff("v8", "v9"), Kind.SCHEMA, "retyped")
    assert retyped.severity is Severity.HIGH and "float32 → string" in retyped.summary


def test_column_renamed_and_removed_are_high() -> None:
    renamed = _one(_diff("v3", "v4"), Kind.SCHEMA, "renamed")
    assert renamed.severity is Severity.HIGH and renamed.detail["old"]["name"] == "text"
    assert renamed.detail["new"]["name"] == "review" and renamed.direction is Direction.UPDATE
    removed = _one(_diff("v4", "v5"), Kind.SCHEMA, "removed")
    assert removed.severity is Severity.HIGH and removed.detail["column"] == "title"


def test_classlabel_names_reordered_is_high() -> None:
    reordered = _one(_diff("v4", "v5"), Kind.SCHEMA, "labels_reordered")
    assert reordered.severity is Severity.HIGH
    assert reordered.detail["old"]["names"] == ["neg", "pos"] and reordered.detail["new"]["names"] == ["pos", "neg"]
    assert "label ids now mean other classes" in reordered.summary


def test_classlabel_names_appended_is_medium() -> None:
    added = _one(_diff("v8", "v9"), Kind.SCHEMA, "labels_added")
    assert added.severity is Severity.MEDIUM and "mixed" in added.summary


def test_rows_of_a_training_split_medium() -> None:
    rows = _one(_diff("v2", "v3"), Kind.SPLITS, "rows")
    assert rows.severity is Severity.MEDIUM and rows.detail["split"] == "train"
    assert rows.detail["rows"] == {"old": 100, "new": 150} and not rows.detail["evaluation"]


def test_a_test_split_that_grows_is_a_contamination_risk() -> None:
    records = _diff("v3", "v4")
    grown = next(r for r in records if r.kind is Kind.SPLITS and r.detail.get("split") == "test")
    assert grown.severity is Severity.HIGH and grown.detail["contamination_risk"] is True
    assert "contamination risk" in grown.summary and grown.detail["evaluation"] is True
    assert _one(records, Kind.SPLITS, "added").detail["split"] == "validation"
    bytes_only = _one(records, Kind.SPLITS, "bytes")
    assert bytes_only.severity is Severity.LOW and bytes_only.detail["bytes"] == {"old": 15000, "new": 15500}


def test_split_added_medium_removed_high() -> None:
    added = _one(_diff("v3", "v4"), Kind.SPLITS, "added")
    assert added.severity is Severity.MEDIUM
    removed = _one(_diff("v6", "v7"), Kind.SPLITS, "removed")
    assert removed.severity is Severity.HIGH and removed.detail["split"] == "validation"


def test_format_change_and_data_files_added_removed() -> None:
    records = _diff("v1", "v2")
    fmt = _one(records, Kind.DATA_FILES, "format")
    assert fmt.severity is Severity.MEDIUM and (fmt.detail["old"], fmt.detail["new"]) == (["csv"], ["parquet"])
    assert _one(records, Kind.DATA_FILES, "added").severity is Severity.LOW
    removed = _one(records, Kind.DATA_FILES, "removed")
    assert removed.severity is Severity.MEDIUM and removed.detail["files"] == ["data/test.csv", "data/train.csv"]
    total = _one(records, Kind.DATA_FILES, "total_size")
    assert total.severity is Severity.LOW and total.detail["totals"]["files"] == {"old": 2, "new": 2}


def test_reupload_changes_the_lfs_oid() -> None:
    replaced = _one(_diff("v2", "v3"), Kind.DATA_FILES, "replaced")
    path = "data/train-00000-of-00001.parquet"
    assert replaced.detail["files"] == [path] and replaced.severity is Severity.MEDIUM  # the card says rows grew
    oids = replaced.detail["oids"][path]
    assert oids["old"] == V["v2"].files[path].lfs_sha256 and oids["new"] == V["v3"].files[path].lfs_sha256
    assert oids["old"] != oids["new"]


def test_silent_reupload_is_high() -> None:
    records = _diff("v7", "v8")
    replaced = _one(records, Kind.DATA_FILES, "replaced")
    assert replaced.severity is Severity.HIGH and replaced.detail["silent"] is True
    assert {r.kind for r in records} == {Kind.DATA_FILES}  # nothing in the card moved


def test_configs_added_default_changed_and_removed() -> None:
    records = _diff("v5", "v6")
    assert _one(records, Kind.SUBSETS, "added").severity is Severity.LOW
    default = _one(records, Kind.SUBSETS, "default")
    assert default.severity is Severity.HIGH and (default.detail["old"], default.detail["new"]) == ("default", "extra")
    later = _diff("v6", "v7")
    removed = _one(later, Kind.SUBSETS, "removed")
    assert removed.severity is Severity.HIGH and removed.detail["config"] == "extra"
    assert _one(later, Kind.SUBSETS, "default").detail["new"] == "default"


def test_data_files_patterns_changed_medium() -> None:
    patterns = _one(_diff("v1", "v2"), Kind.SUBSETS, "data_files")
    assert patterns.severity is Severity.MEDIUM
    assert patterns.detail["old"] == {"test": ["data/test.csv"], "train": ["data/train.csv"]}
    assert patterns.detail["new"] == {"test": ["data/test-*"], "train": ["data/train-*"]}


def test_loading_script_appearing_is_a_hazard_cleared_when_removed() -> None:
    added = next(r for r in _diff("v5", "v6") if r.kind is Kind.CUSTOM_CODE)
    assert (added.severity, added.direction) == (Severity.HIGH, Direction.HAZARD)
    assert added.detail["hazards"] == ["code:reviews.py"] and "loading script added: reviews.py" in added.summary
    removed = next(r for r in _diff("v6", "v7") if r.kind is Kind.CUSTOM_CODE)
    assert removed.severity is Severity.LOW and removed.detail["clears"] == ["code:reviews.py"]


def test_licence_and_gating_as_for_models() -> None:
    records = _diff("v6", "v7")
    licence = next(r for r in records if r.kind is Kind.LICENSE)
    assert (licence.severity, licence.direction) == (Severity.HIGH, Direction.HAZARD)  # non-commercial
    gating = next(r for r in records if r.kind is Kind.CARD and r.detail["key"] == "gating")
    assert (gating.severity, gating.direction) == (Severity.MEDIUM, Direction.HAZARD)


def test_card_metadata_is_low_and_dataset_info_is_not_card() -> None:
    records = _diff("v5", "v6")
    card = {r.detail["key"]: r for r in records if r.kind is Kind.CARD}
    assert set(card) == {"language", "task_categories"} and all(r.severity is Severity.LOW for r in card.values())
    assert all("dataset_info" not in r.path or r.kind is not Kind.CARD for r in _diff("v3", "v4"))


def test_every_kind_is_exercised_by_the_synthetic_history() -> None:
    seen: set[tuple[str, str]] = set()
    names = list(V)
    for a, b in zip(names, names[1:]):
        seen |= {(r.kind.value, r.detail.get("op") or "") for r in _diff(a, b)}
    for kind, op in [
        ("schema", "added"), ("schema", "removed"), ("schema", "renamed"), ("schema", "retyped"),
        ("schema", "labels_reordered"), ("schema", "labels_added"), ("splits", "added"), ("splits", "removed"),
        ("splits", "rows"), ("splits", "bytes"), ("data_files", "added"), ("data_files", "removed"),
        ("data_files", "replaced"), ("data_files", "format"), ("data_files", "total_size"), ("subsets", "added"),
        ("subsets", "removed"), ("subsets", "default"), ("subsets", "data_files"),
    ]:  # fmt: skip
        assert (kind, op) in seen, (kind, op)
    assert {k for k, _ in seen} >= {"custom_code", "license", "card"}


def test_real_imdb_history_bytes_re_measured() -> None:
    real = dataset_versions(IMDB)
    records = diff_dataset_snapshots(real["v1"], real["v2"])
    # v1's features come from dataset_infos.json, v2's from the card: read alike, so no schema change
    assert _kinds(records) == {("splits", "low", "update"), ("splits", "info", "update")}
    train = next(r for r in records if r.detail.get("split") == "train")
    assert train.detail["bytes"] == {"old": 33442202, "new": 33432835} and train.detail["rows"] == {"old": 25000, "new": 25000}
    meta = dataset_meta(real["v2"])
    assert meta.default == "plain_text" and meta.source == "README.md"
    label = meta.configs["plain_text"].columns[1]  # type: ignore[index]
    assert (label.type, label.names) == ("class_label", ("neg", "pos"))
    assert dataset_meta(real["v1"]).source == "dataset_infos.json"


def test_real_emotion_history_config_dropped_and_label_became_classlabel() -> None:
    real = dataset_versions(EMOTION)
    records = diff_dataset_snapshots(real["v1"], real["v2"])
    retyped = _one(records, Kind.SCHEMA, "retyped")
    assert retyped.severity is Severity.HIGH and retyped.detail["config"] == "emotion"
    assert retyped.detail["old"]["type"] == "string" and retyped.detail["new"]["names"][:2] == ["sadness", "joy"]
    removed = _one(records, Kind.SUBSETS, "removed")
    assert removed.severity is Severity.HIGH and removed.detail["config"] == "default"
    assert removed.path == "dataset_infos.json:configs.default"  # the configs are named there
    default = _one(records, Kind.SUBSETS, "default")
    assert (default.detail["old"], default.detail["new"]) == ("default", "emotion")
    assert {r.kind for r in records} == {Kind.SCHEMA, Kind.SUBSETS, Kind.SPLITS}  # the same card, the same files


def test_script_only_metadata_is_not_run() -> None:
    real = dataset_versions(IMDB)
    first = diff_dataset_snapshots(None, real["v1"])
    script = next(r for r in first if r.kind is Kind.CUSTOM_CODE)
    assert script.detail["severity_if_changed"] == "high" and script.direction is Direction.HAZARD


@pytest.mark.parametrize("block", [
    "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
                                                   for p, c in zip("abcdefgh", "bcdefghi")),
    "dataset_info: " + "[" * 200 + "]" * 200 + "\n",
])  # fmt: skip
def test_card_yaml_read_within_the_model_card_limits(block: str) -> None:
    bomb = replace(V["v1"], contents={**V["v1"].contents, "README.md": ("---\n" + block + "---\n").encode()})
    records = diff_dataset_snapshots(V["v1"], bomb)
    error = next(r for r in records if r.kind is Kind.CARD and "error" in r.detail)
    assert error.severity is Severity.LOW and "not read" in error.summary or "not valid YAML" in error.summary
    assert dataset_meta(bomb).configs == {}


def test_compressed_and_pattern_matched_data_files() -> None:
    from hubwatch.diff.dataset_files import data_files_of, file_format

    assert file_format("train.jsonl.gz") == "json" and file_format("images/001.PNG") == "imagefolder"
    assert file_format("model.pkl") is None and file_format("README.md") is None
    meta = dataset_meta(V["v2"])
    assert data_files_of(["data/train-00000-of-00001.parquet", "README.md", "reviews.py", ".gitattributes",
                          "dataset_infos.json", "data/blob.weird"], meta.configs) == {
        "data/train-00000-of-00001.parquet"}  # fmt: skip
    assert data_files_of(["data/train-x.weird"], meta.configs) == {"data/train-x.weird"}  # a pattern matches it


def test_pickled_data_keeps_the_pickle_hazard() -> None:
    from hubwatch.domain.records import FileRecord

    files = {**V["v2"].files, "data/extra.pkl": FileRecord("data/extra.pkl", 10, "b" * 40, "c" * 64)}
    records = diff_dataset_snapshots(V["v2"], Snapshot(V["v2"].sha, files, V["v2"].contents))
    assert _kinds(records) == {("pickle", "high", "hazard")}


def test_every_dataset_history_has_a_golden_file() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == sorted(h.name for h in all_dataset_histories())
    assert len(all_dataset_histories()) == 3


@pytest.mark.parametrize("history", all_dataset_histories(), ids=lambda p: p.name)
def test_dataset_replay_matches_reviewed_golden(history: Path) -> None:
    expected = json.loads((GOLDEN / f"{history.name}.json").read_text(encoding="utf-8"))
    assert dataset_golden(history) == expected, (
        f"{history.name} changed; review, then regenerate with tests/diff/regen_diff_golden.py"
    )
