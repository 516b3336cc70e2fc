"""The OSV export: zip contents, per-record files, modified_id.csv newest first, determinism."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from hubwatch.settings import Settings
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.advisories.advise import plan_advisories
from hubwatch.advisories.osv import InvalidAdvisory
from hubwatch.advisories.osv_export import export_files, write_export
from osv_schema_check import assert_schema_valid

REPO = RepoId("acme", "llama")


def record(n: int, day: int, kind: Kind = Kind.PICKLE) -> AdvisoryRecord:
    change = ChangeRecord(kind, Severity.HIGH, f"f{n}.bin", "added", {"file": f"f{n}.bin", "key": None,
                                                                       "old": None, "new": 1})
    revision = RevisionRecord(f"{n:040x}", f"{n - 1:040x}", datetime(2024, 1, day, tzinfo=timezone.utc), "t")
    [out] = plan_advisories(REPO, revision, [change], [], Settings())
    return out


def names(blob: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        return archive.namelist()


def test_layout_and_contents() -> None:
    records = [record(2, 3), record(3, 9), record(4, 5)]
    files = export_files(records)
    ids = sorted(r.id for r in records)
    assert sorted(files) == sorted(
        ["all.zip", "GIT/all.zip", "modified_id.csv", "GIT/modified_id.csv", "ecosystems.txt"]
        + [f"GIT/{i}.json" for i in ids]
    )
    assert names(files["all.zip"]) == names(files["GIT/all.zip"]) == [f"{i}.json" for i in ids]
    with zipfile.ZipFile(io.BytesIO(files["GIT/all.zip"])) as archive:
        for ident in ids:
            inside = json.loads(archive.read(f"{ident}.json"))
            assert_schema_valid(inside)
            assert inside == json.loads(files[f"GIT/{ident}.json"])
    newest_first = [r.id for r in sorted(records, key=lambda r: r.modified, reverse=True)]
    assert files["modified_id.csv"].decode().splitlines() == [
        f"2024-01-0{d}T00:00:00Z,GIT/{i}" for d, i in zip((9, 5, 3), newest_first)
    ]
    assert files["GIT/modified_id.csv"].decode().splitlines()[0] == f"2024-01-09T00:00:00Z,{newest_first[0]}"
    assert files["ecosystems.txt"] == b"GIT\n"


def test_export_is_byte_identical_for_the_same_records() -> None:
    records = [record(2, 3), record(3, 4)]
    assert export_files(records) == export_files(list(reversed(records)))


def test_withdrawn_state_is_published() -> None:
    base = record(2, 3)
    withdrawn = AdvisoryRecord(base.id, base.repo, base.revision_sha, base.osv, base.modified,
                               withdrawn=datetime(2024, 2, 1, tzinfo=timezone.utc))
    files = export_files([withdrawn])
    assert json.loads(files[f"GIT/{base.id}.json"])["withdrawn"] == "2024-02-01T00:00:00Z"


def test_invalid_or_duplicate_records_are_refused() -> None:
    good = record(2, 3)
    broken = AdvisoryRecord("x_BAD-1", REPO, good.revision_sha, {**good.osv, "id": "x_BAD-1",
                                                                 "modified": "3 Jan 2024"}, good.modified)
    with pytest.raises(InvalidAdvisory, match="x_BAD-1"):
        export_files([broken])
    with pytest.raises(ValueError, match="twice"):
        export_files([good, good])


def test_write_replaces_stale_records(tmp_path: Path) -> None:
    first = [record(2, 3), record(3, 4)]
    write_export(export_files(first), tmp_path)
    write_export(export_files(first[:1]), tmp_path)
    assert sorted(p.name for p in (tmp_path / "GIT").glob("*.json")) == [f"{first[0].id}.json"]
    assert names((tmp_path / "all.zip").read_bytes()) == [f"{first[0].id}.json"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        write_export({}, tmp_path / "file")
