"""A dataset head's parquet conversion (`refs/convert/parquet`) read by the poll and kept in its snapshot
(tracker/hub_parquet.py, diff/dataset_parquet.py): through the official huggingface_hub client and the
emulator's conversion branch, on SQLite and PostgreSQL. Which requests it costs is seen from what the
client really sent (huggingface_hub's `set_client_factory`), not from hubwatch's own counting."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from huggingface_hub import HfApi

from hub_requests import sent  # noqa: F401  (the fixture)

from hubwatch.diff.dataset_parquet import CONVERSION_PATH, read_conversion
from hubwatch.domain.records import RepoId
from hubwatch.domain.snapshot import Snapshot
from hubwatch.estimator.dataset_size import dataset_run
from hubwatch.settings import Settings
from hubwatch.feeds import create_app
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.hub_datasets import dataset_summary
from hubwatch.tracker.poller import NewRevisions, poll_repos
from tests.tracker.csv_upload import PARQUET, UPLOAD, csv_upload

REVIEWS = RepoId.parse("datasets/hubwatch-test/reviews")
IMDB = RepoId.parse("datasets/stanfordnlp/imdb")


def _poll(sim: Any, store: Any, repo: RepoId) -> Any:
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, hf_token="")
    store.watch(repo)
    (outcome,) = poll_repos([repo], hub=HubClient.from_settings(settings), store=store, settings=settings)
    return outcome


def _stored(store: Any, repo: RepoId, sha: str) -> Snapshot:
    files, contents = store.revisions.snapshot_files(repo, sha)
    return Snapshot(sha, {f.path: f for f in files}, contents)


def test_the_head_keeps_its_conversion_and_older_revisions_none(
    hubsim_factory: Callable[..., Any], datasets_root: Path, store: Any, sent: list[str]
) -> None:
    sim = hubsim_factory(root=datasets_root, at="v3")
    api = HfApi(endpoint=sim.url, token=False)
    target = api.list_repo_refs(REVIEWS.hub_id, repo_type="dataset").converts[0].target_commit
    sent.clear()
    outcome = _poll(sim, store, REVIEWS)
    assert isinstance(outcome, NewRevisions) and len(outcome.shas) == 3
    base = f"GET /api/datasets/{REVIEWS.hub_id}"
    asked = [s for s in sent if s.startswith((f"{base}/refs", f"{base}/commits/{target}", f"{base}/tree/{target}"))]
    assert asked == [f"{base}/refs", f"{base}/commits/{target}",
                                                f"{base}/tree/{target}"]  # once each, for the head alone
    footers = sorted(s for s in sent if s.startswith(f"GET /datasets/{REVIEWS.hub_id}/resolve/{target}/"))
    assert footers == [f"GET /datasets/{REVIEWS.hub_id}/resolve/{target}/default/{split}/0000.parquet"
                       for split in ("test", "train")]  # one range request each: the footer is in the last 64 KiB
    head = _stored(store, REVIEWS, outcome.shas[-1])
    conversion = read_conversion(head)
    assert conversion is not None and conversion.commit == target and conversion.label == f"refs/convert/parquet@{target[:12]}"
    assert set(conversion.configs) == {"default"} and set(conversion.configs["default"]) == {"train", "test"}
    train = conversion.configs["default"]["train"]
    raw = (PARQUET / "v3" / "default" / "train" / "0000.parquet").read_bytes()
    assert [(s.path, s.size, s.oid) for s in train.shards] == [
        ("default/train/0000.parquet", len(raw), hashlib.sha256(raw).hexdigest())]
    assert train.bytes == len(raw) and not train.partial
    assert (train.rows, conversion.configs["default"]["test"].rows) == (150, 20)  # the footers' num_rows
    assert [c.name for c in train.columns or ()] == ["text", "label", "score", "title"]
    assert head.files[CONVERSION_PATH].size == len(head.contents[CONVERSION_PATH])
    for older in outcome.shas[:-1]:  # v1 had a conversion once, but the branch now holds v3's only
        assert CONVERSION_PATH not in _stored(store, REVIEWS, older).files

    # v4: the branch still holds v3's conversion, the one v3 kept: v4 gets none, and its date is not asked.
    sim.advance(str(REVIEWS))
    sent.clear()
    outcome = _poll(sim, store, REVIEWS)
    assert isinstance(outcome, NewRevisions) and len(outcome.shas) == 1
    asked = [s for s in sent if s.startswith((f"{base}/refs", f"{base}/commits/{target}", f"{base}/tree/{target}"))]
    assert asked == [f"{base}/refs"]  # no date or tree read of a conversion that is not v4's
    assert not [s for s in sent if "/resolve/" in s and s.endswith(".parquet")]  # nor any footer
    assert CONVERSION_PATH not in _stored(store, REVIEWS, outcome.shas[0]).files


def test_a_dataset_without_conversion_asks_its_refs_only(
    hubsim_factory: Callable[..., Any], datasets_root: Path, store: Any, sent: list[str]
) -> None:
    sim = hubsim_factory(root=datasets_root, at=None)
    outcome = _poll(sim, store, IMDB)
    assert isinstance(outcome, NewRevisions) and len(outcome.shas) == 2
    base = f"GET /api/datasets/{IMDB.hub_id}"
    listed = {s for s in sent if s.startswith(f"{base}/tree/")}
    assert len(listed) == 2  # main's two revisions, nothing else
    assert [s for s in sent if s.startswith(f"{base}/refs")] == [f"{base}/refs"]
    assert not [s for s in sent if "convert" in s]
    assert CONVERSION_PATH not in _stored(store, IMDB, outcome.shas[-1]).files


def test_a_card_without_sizes_gets_splits_and_bytes_from_the_conversion(
    hubsim_factory: Callable[..., Any], tmp_path: Path, store: Any, sent: list[str]
) -> None:
    folder = csv_upload(tmp_path)
    sim = hubsim_factory(root=tmp_path, at="v1")
    first = _poll(sim, store, UPLOAD)
    assert isinstance(first, NewRevisions) and len(first.shas) == 1
    sim.advance(str(UPLOAD))
    sent.clear()
    second = _poll(sim, store, UPLOAD)
    assert isinstance(second, NewRevisions) and len(second.shas) == 1
    # Footers read again only of shards whose content the first conversion did not have (by LFS oid):
    # v2's test shard and its second train shard are v1's test and train shards.
    read = sorted(s.split("/resolve/", 1)[1].split("/", 1)[1] for s in sent if "/resolve/" in s and s.endswith(".parquet"))
    assert read == ["default/train/0000.parquet", "default/validation/0000.parquet"]
    (entry,) = [e for e in store.history(UPLOAD) if e.revision.sha == second.shas[0]]
    found = {(c.kind.value, c.severity.value, c.detail.get("op"), c.detail.get("split")) for c in entry.changes}
    assert {("splits", "medium", "added", "validation"), ("splits", "medium", "rows", "train")} <= found
    train = next(c for c in entry.changes if c.detail.get("split") == "train")  # rows from the shards' footers
    assert train.summary == "default/train: 100 → 250 rows" and train.detail["file"] == "refs/convert/parquet"
    size = lambda *p: sum((folder / "PARQUET" / "v2" / "default" / "train" / n).stat().st_size for n in p)  # noqa: E731
    assert train.detail["new"] == {"rows": 250, "bytes": None, "parquet_bytes": size("0000.parquet", "0001.parquet"),
                                   "shards": 2}
    added = next(c for c in entry.changes if c.detail.get("split") == "validation")
    assert added.summary == "default: split validation added (150 rows)"
    schema = {(c.severity.value, c.summary) for c in entry.changes if c.kind.value == "schema"}
    assert schema == {("low", "default: column title (string) added"),
                      ("medium", "default: column score retyped int32 → float32")}, schema  # the footers' features
    (initial,) = [e for e in store.history(UPLOAD) if e.revision.sha == first.shas[0]]
    (config,) = [c for c in initial.changes if c.kind.value == "subsets"]
    assert config.detail["columns"] == ["text", "label", "score"] and config.detail["file"] == "refs/convert/parquet"

    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, hf_token="")
    with TestClient(create_app(settings, store)) as client:
        page = client.get(UPLOAD.url_path)
    assert page.status_code == 200, page.text
    assert "Splits from the hub&#39;s parquet conversion" in page.text or "Splits from the hub's parquet conversion" in page.text
    assert "<code>validation</code>" in page.text and "2 shards" in page.text

    assert "<td class=\"num\">250</td>" in page.text and "<code>label</code>" in page.text

    summary = dataset_summary(HubClient.from_settings(settings), UPLOAD)
    assert summary.source is not None and summary.source.startswith("the hub's parquet conversion (refs/convert/parquet@")
    assert set(summary.configs["default"].splits) == {"train", "test", "validation"}
    run = dataset_run(summary)
    assert run.samples == 250 and run.samples_from.endswith("default/train rows in its parquet footers")
    assert run.tokens_per_sample is None  # parquet bytes are compressed: no Arrow size to estimate tokens from


def test_hostile_footers_are_noted_and_the_revision_stored_without_their_rows(
    hubsim_factory: Callable[..., Any], tmp_path: Path, store: Any
) -> None:
    folder = csv_upload(tmp_path)
    shards = folder / "PARQUET" / "v1" / "default"
    real = (shards / "train" / "0000.parquet").read_bytes()
    (shards / "test" / "0000.parquet").write_bytes(b"PAR1 converted test v1 PAR1")  # garbage: the old stand-in
    (shards / "huge" / "0000.parquet").parent.mkdir()
    (shards / "huge" / "0000.parquet").write_bytes(b"PAR1" + b"x" * 100 + (2**31).to_bytes(4, "little") + b"PAR1")
    (shards / "cut" / "0000.parquet").parent.mkdir()
    (shards / "cut" / "0000.parquet").write_bytes(real[:-700] + real[-500:])  # 200 bytes gone from its footer
    sim = hubsim_factory(root=tmp_path, at="v1")
    outcome = _poll(sim, store, UPLOAD)
    assert isinstance(outcome, NewRevisions) and len(outcome.shas) == 1
    conversion = read_conversion(_stored(store, UPLOAD, outcome.shas[0]))
    assert conversion is not None
    splits = conversion.configs["default"]
    assert splits["train"].rows == 100 and splits["train"].note is None
    assert splits["test"].rows is None and splits["test"].note is not None
    assert "default/test/0000.parquet" in splits["test"].note and "past the 1,048,576 read" in splits["test"].note
    assert splits["huge"].rows is None and "footer of 2,147,483,648 bytes, past the" in (splits["huge"].note or "")
    assert splits["cut"].rows is None and "footer" in (splits["cut"].note or ""), splits["cut"].note
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, hf_token="")
    with TestClient(create_app(settings, store)) as client:
        page = client.get(UPLOAD.url_path)
    assert page.status_code == 200 and "<td class=\"num\">100</td>" in page.text
    assert "default/huge/0000.parquet: footer of 2,147,483,648 bytes, past the 1,048,576 read" in page.text


def test_estimate_dataset_takes_its_samples_from_the_conversion(
    hubsim_factory: Callable[..., Any], tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`hubwatch estimate MODEL --dataset` on a dataset whose card states no sizes: the rows its
    conversion's footers count, said to come from there, and no tokens-per-sample guess."""
    from hubwatch.cli import main

    csv_upload(tmp_path)
    tiny = data_dir / "hubsim" / "hubsim-test__tiny-llama"
    (tmp_path / tiny.name).symlink_to(tiny.resolve(), target_is_directory=True)
    sim = hubsim_factory(root=tmp_path, at=None)
    monkeypatch.setenv("HUBWATCH_HUB_ENDPOINT", sim.url)
    with pytest.raises(SystemExit) as exited:
        main(["estimate", "hubsim-test/tiny-llama", "--dataset", str(UPLOAD), "--split", "validation", "--json"])
    out = capsys.readouterr().out
    assert exited.value.code in (0, None), out
    (entry,) = json.loads(out)
    shown = entry["dataset"]
    assert (shown["config"], shown["split"], shown["rows"], shown["samples"]) == ("default", "validation", 150, 150)
    assert shown["revision"] == sim.head(str(UPLOAD)) and shown["tokens_per_sample"] is None
    assert shown["rows_from"].startswith("the hub's parquet conversion (refs/convert/parquet@")
    assert shown["rows_from"].endswith("default/validation rows in its parquet footers")
    assert entry["cost"]["samples"] == 150
