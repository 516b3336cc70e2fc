"""HubClient against the hub emulator over real HTTP, with the official huggingface_hub client."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from hubwatch.settings import Settings
from hubwatch.domain.records import RepoId
from hubwatch.tracker.errors import GatedRepo, InvalidContent, RateLimited, RepoNotFound, RevisionNotFound
from hubwatch.tracker.hub import HubClient

LLAMA = RepoId.parse("meta-llama/Llama-2-7b-hf")
QWEN = RepoId.parse("Qwen/Qwen-7B")


def history_rows(root: Path, repo: RepoId) -> list[dict[str, str]]:
    text = (root / f"{repo.org}__{repo.name}" / "HISTORY.tsv").read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))


def client(sim: Any) -> HubClient:
    return HubClient.from_settings(Settings(database_url="sqlite://", hub_endpoint=sim.url, hub_timeout_s=10))


def test_head_and_commits_follow_the_history(hubsim_factory: Any, histories_root: Path) -> None:
    sim = hubsim_factory(at=None, page_size=2)  # small pages: the commit list spans several
    hub = client(sim)
    rows = history_rows(histories_root, LLAMA)
    commits = hub.commits(LLAMA)
    assert [c.sha for c in commits] == [r["commit"] for r in rows]
    assert [c.parent for c in commits] == [None] + [r["commit"] for r in rows[:-1]]
    assert [c.title for c in commits] == [r["message"] for r in rows]
    assert [c.date.date().isoformat() for c in commits] == [r["date"] for r in rows]
    assert hub.head(LLAMA) == rows[-1]["commit"]
    newest = hub.commits(LLAMA, limit=3)
    assert [c.sha for c in newest] == [r["commit"] for r in rows[-3:]]
    assert newest[0].parent == rows[-4]["commit"]  # the parent link survives the limit


def test_snapshot_holds_the_tracked_files_byte_for_byte(hubsim: Any, histories_root: Path) -> None:
    hub = client(hubsim)
    sha = hub.head(QWEN)
    snap = hub.snapshot(QWEN, sha)
    folder = histories_root / "Qwen__Qwen-7B" / "v1"
    expected = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert set(snap.files) == set(expected)
    assert dict(snap.contents) == expected
    assert all(snap.files[name].size == len(data) for name, data in expected.items())
    assert all(snap.files[name].blob_id for name in expected)


def test_snapshot_reads_safetensors_headers_by_range(hubsim_factory: Any, data_dir: Path) -> None:
    sim = hubsim_factory(root=data_dir / "hubsim", at=None)
    hub = client(sim)
    repo = RepoId.parse("hubsim-test/tiny-llama")
    snap = hub.snapshot(repo, hub.head(repo))
    weights = json.loads((data_dir / "hubsim" / "hubsim-test__tiny-llama" / "v3" / "weights.json").read_text())
    assert set(snap.safetensors) == set(weights)
    for file, tensors in weights.items():
        declared = {k: v for k, v in tensors.items() if k != "__metadata__"}
        assert {k: (v["dtype"], v["shape"]) for k, v in snap.safetensors[file].items()} == {
            k: (v["dtype"], v["shape"]) for k, v in declared.items()
        }
        assert snap.files[file].lfs_sha256 is not None
        assert file not in snap.contents  # the weights themselves are never downloaded


def test_a_snapshot_reuses_unchanged_files_of_the_previous_one(hubsim_factory: Any) -> None:
    sim = hubsim_factory(at=None)
    hub = client(sim)
    commits = hub.commits(LLAMA)
    first = hub.snapshot(LLAMA, commits[4].sha)
    sim.set_faults(invalid_json="*.json")  # any real download would now be broken
    again = hub.snapshot(LLAMA, commits[4].sha, previous=first)
    assert dict(again.contents) == dict(first.contents)


def test_estimate_inputs_for_the_cli(hubsim_factory: Any, data_dir: Path) -> None:
    sim = hubsim_factory(root=data_dir / "hubsim", at="v1")
    from hubwatch.tracker.estimate_inputs import estimator_inputs

    snapshot = client(sim).fetch_estimate_inputs("hubsim-test/tiny-llama")
    assert snapshot.sha == "1" * 40
    assert snapshot.safetensors and all({"dtype", "shape"} <= set(v) for header in snapshot.safetensors.values()
                                        for k, v in header.items() if k != "__metadata__")
    assert set(snapshot.contents) <= {"config.json", "tokenizer_config.json", "special_tokens_map.json",
                                      "generation_config.json"}  # only what the estimator reads
    inputs = estimator_inputs(snapshot)
    assert inputs is not None and inputs.revision == "1" * 40
    assert inputs.config["model_type"] == "llama"
    assert inputs.manifest is not None and inputs.manifest.tensors
    assert inputs.tokenizer_config is None


def test_missing_repo_and_revision(hubsim: Any) -> None:
    hub = client(hubsim)
    with pytest.raises(RepoNotFound) as missing:
        hub.head(RepoId.parse("nobody/nothing-here"))
    assert missing.value.repo_id == "nobody/nothing-here"
    assert "nobody/nothing-here" in str(missing.value)
    with pytest.raises(RevisionNotFound) as bad_rev:
        hub.head(LLAMA, revision="f" * 40)
    assert bad_rev.value.revision == "f" * 40


def test_gated_repo(hubsim_factory: Any, data_dir: Path) -> None:
    sim = hubsim_factory(root=data_dir / "hubsim")
    hub, repo = client(sim), RepoId.parse("hubsim-test/gated-model")
    sha = hub.head(repo)  # like the hub: the repo's metadata is public, its files are not
    with pytest.raises(GatedRepo) as gated:
        hub.snapshot(repo, sha)
    assert gated.value.repo_id == "hubsim-test/gated-model"
    assert "HF_TOKEN" in gated.value.fix


def test_an_empty_token_setting_means_no_token(hubsim: Any) -> None:
    # HUBWATCH_HF_TOKEN= (set, empty) once sent "Authorization: Bearer ", an illegal header that
    # read as "could not reach the hub"; like an empty HF_TOKEN it now means none.
    hub = HubClient.from_settings(Settings(database_url="sqlite://", hub_endpoint=hubsim.url, hf_token=""))
    assert hub.head(LLAMA) == hubsim.head(str(LLAMA))


def test_rate_limit_carries_retry_after(hubsim: Any) -> None:
    hubsim.set_faults(rate_limit=1, retry_after=7)
    with pytest.raises(RateLimited) as limited:
        client(hubsim).head(LLAMA)
    assert limited.value.retry_after == 7
    assert limited.value.repo_id == str(LLAMA)


def test_invalid_json_names_repo_revision_and_file(hubsim: Any) -> None:
    hub = client(hubsim)
    sha = hub.head(QWEN)
    hubsim.set_faults(invalid_json="Qwen/Qwen-7B/generation_config.json")
    with pytest.raises(InvalidContent) as broken:
        hub.snapshot(QWEN, sha)
    message = str(broken.value)
    assert "Qwen/Qwen-7B" in message and sha[:12] in message and "generation_config.json" in message
    assert broken.value.revision == sha


def test_truncated_body_is_invalid_content(hubsim: Any) -> None:
    hub = client(hubsim)
    sha = hub.head(LLAMA)
    hubsim.set_faults(truncate="meta-llama/Llama-2-7b-hf/config.json", truncate_fraction=0.5)
    with pytest.raises(InvalidContent) as cut:
        hub.snapshot(LLAMA, sha)
    assert "config.json" in str(cut.value) and str(LLAMA) in str(cut.value)


def test_commits_are_listed_only_as_far_as_asked(hubsim_factory: Any, histories_root: Path) -> None:
    """`since` stops the newest-first listing at the first stored sha, `limit` after the commit
    before the newest `limit`: the pages past them are never asked."""
    sim = hubsim_factory(at=None, page_size=2)
    hub = client(sim)
    shas = [r["commit"] for r in history_rows(histories_root, LLAMA)]
    assert len(shas) >= 7

    def asked(call: Any) -> tuple[Any, int]:
        before = sim.requests()["seen"]
        out = call()
        return out, sim.requests()["seen"] - before

    _, everything = asked(lambda: hub.commits(LLAMA))
    assert everything == -(-len(shas) // 2)  # every page of two
    since, pages = asked(lambda: hub.commits(LLAMA, since={shas[-3], shas[0]}))
    assert [c.sha for c in since] == shas[-3:] and pages == 2
    assert since[0].parent is None and [c.parent for c in since[1:]] == shas[-3:-1]  # the stored one's is not read
    newest, pages = asked(lambda: hub.commits(LLAMA, limit=3))
    assert [c.sha for c in newest] == shas[-3:] and newest[0].parent == shas[-4] and pages == 2
    stored_newest, pages = asked(lambda: hub.commits(LLAMA, since={shas[-1]}))
    assert [c.sha for c in stored_newest] == shas[-1:] and pages == 1


@pytest.mark.parametrize(
    ("entry", "says"),
    [({"date": "2024-01-01T00:00:00.000Z"}, "without a commit id"), ("not an object", "without a commit id"),
     ({"id": "a" * 40, "date": "yesterday"}, "no readable date"), ({"id": "a" * 40}, "no readable date")],
)
def test_a_commit_list_entry_the_hub_garbled_is_invalid_content(entry: object, says: str) -> None:
    from hubwatch.tracker.hub import _commit_fields

    with pytest.raises(InvalidContent, match=says) as raised:
        _commit_fields(entry, "org/name")
    assert raised.value.repo_id == "org/name"
    sha, date = _commit_fields({"id": "b" * 40, "date": "2024-05-01T12:30:00.000Z"}, "org/name")
    assert sha == "b" * 40 and date.isoformat() == "2024-05-01T12:30:00+00:00"
