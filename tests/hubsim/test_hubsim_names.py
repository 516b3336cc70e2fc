"""Renames (307), case-insensitive ids, branches/tags/`refs/pr/N`/HEAD, `/raw/` and X-Total-Count,
seen through the official client over real HTTP."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from huggingface_hub import HfApi, hf_hub_download, hf_hub_url

from hubwatch.hubsim import HubSim

LLAMA2 = "meta-llama/Llama-2-7b-hf"
TINY = "hubsim-test/tiny-llama"
HUBSIM_DATA = Path(__file__).resolve().parents[1] / "data" / "hubsim"


def _refs(sim: HubSim, repo: str, **body: object) -> dict[str, object]:
    response = httpx.post(f"{sim.url}/_sim/{repo}/refs", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, object] = response.json()
    return data


def test_a_renamed_repo_answers_307_and_the_client_follows(hubsim: HubSim) -> None:
    api = HfApi(endpoint=hubsim.url, token=False)
    head = api.model_info(LLAMA2).sha
    moved = httpx.post(f"{hubsim.url}/_sim/{LLAMA2}/rename", json={"to": "llama-org/Llama-2-7b"})
    assert moved.json() == {"renamed": LLAMA2, "to": "llama-org/Llama-2-7b"}
    raw = httpx.get(f"{hubsim.url}/api/models/{LLAMA2}/revision/main?expand=sha")
    assert raw.status_code == 307
    assert raw.headers["location"] == "/api/models/llama-org/Llama-2-7b/revision/main?expand=sha"
    info = api.model_info(LLAMA2)  # the client follows the 307: the answer names the new id
    assert (info.id, info.sha) == ("llama-org/Llama-2-7b", head)
    assert [c.commit_id for c in api.list_repo_commits(LLAMA2)] == [head]
    resolved = httpx.get(hf_hub_url(LLAMA2, "config.json", endpoint=hubsim.url))
    assert resolved.status_code == 307 and resolved.headers["location"].startswith("/llama-org/Llama-2-7b/resolve/")
    listed = [m.id for m in api.list_models(sort="last_modified")]
    assert "llama-org/Llama-2-7b" in listed and LLAMA2 not in listed  # the listing shows the new id only
    assert hubsim.advance("llama-org/Llama-2-7b") == api.model_info("llama-org/Llama-2-7b").sha


def test_a_rename_chain_and_a_taken_name(hubsim: HubSim) -> None:
    httpx.post(f"{hubsim.url}/_sim/{LLAMA2}/rename", json={"to": "a/b"})
    httpx.post(f"{hubsim.url}/_sim/a/b/rename", json={"to": "c/d"})
    first = httpx.get(f"{hubsim.url}/api/models/{LLAMA2}")
    assert first.status_code == 307 and first.headers["location"] == "/api/models/c/d"
    taken = httpx.post(f"{hubsim.url}/_sim/c/d/rename", json={"to": "Qwen/qwen-7b"})
    assert taken.status_code == 409


def test_ids_are_resolved_case_insensitively(hubsim: HubSim) -> None:
    api = HfApi(endpoint=hubsim.url, token=False)
    info = api.model_info("META-LLAMA/llama-2-7B-HF")
    assert info.id == LLAMA2 and info.sha == hubsim.head(LLAMA2)
    assert httpx.get(hf_hub_url("Meta-Llama/LLAMA-2-7b-hf", "config.json", endpoint=hubsim.url)).status_code == 200


def test_branches_tags_and_pull_requests_as_revisions(hubsim: HubSim) -> None:
    api = HfApi(endpoint=hubsim.url, token=False)
    v1 = hubsim.head(LLAMA2)
    tag, branch, pr = (
        _refs(hubsim, LLAMA2, tag="v1.0", at="v1"),
        _refs(hubsim, LLAMA2, branch="dev", at="v2"),
        _refs(hubsim, LLAMA2, pr=1, at="v3"),
    )
    assert tag["sha"] == v1 and pr["ref"] == "refs/pr/1"
    refs = api.list_repo_refs(LLAMA2, include_pull_requests=True)
    assert {b.name: b.target_commit for b in refs.branches} == {"main": v1, "dev": branch["sha"]}
    assert [(t.name, t.target_commit) for t in refs.tags] == [("v1.0", v1)]
    assert [(p.ref, p.target_commit) for p in refs.pull_requests or []] == [("refs/pr/1", pr["sha"])]
    for revision, sha in [("v1.0", v1), ("dev", branch["sha"]), ("refs/heads/dev", branch["sha"]),
                          ("refs/pr/1", pr["sha"]), ("HEAD", v1), ("main", v1)]:
        assert api.model_info(LLAMA2, revision=revision).sha == sha, revision
        assert api.list_repo_commits(LLAMA2, revision=revision)[0].commit_id == sha, revision
    # the pull request's commit is not on main: main still shows v1 only
    assert [c.commit_id for c in api.list_repo_commits(LLAMA2)] == [v1]
    meta = api.get_hf_file_metadata(url=hf_hub_url(LLAMA2, "config.json", revision="refs/pr/1", endpoint=hubsim.url))
    assert meta.commit_hash == pr["sha"]
    assert httpx.get(f"{hubsim.url}/{LLAMA2}/resolve/refs%2Fpr%2F1/config.json").headers["x-repo-commit"] == pr["sha"]
    assert httpx.get(f"{hubsim.url}/api/models/{LLAMA2}/revision/nope").status_code == 404


def test_raw_serves_the_lfs_pointer_and_resolve_the_content(hubsim_factory: Callable[..., HubSim],
                                                            tmp_path: Path) -> None:
    sim = hubsim_factory(root=HUBSIM_DATA, at=None)
    api = HfApi(endpoint=sim.url, token=False)
    shard = next(s for s in api.model_info(TINY, files_metadata=True).siblings or [] if s.rfilename.endswith(".safetensors"))
    assert shard.lfs is not None
    raw = httpx.get(f"{sim.url}/{TINY}/raw/main/{shard.rfilename}")
    assert raw.status_code == 200
    assert raw.text.startswith("version https://git-lfs.github.com/spec/v1\n")
    assert f"oid sha256:{shard.lfs.sha256}" in raw.text and f"size {shard.lfs.size}" in raw.text
    small = httpx.get(f"{sim.url}/{TINY}/raw/main/config.json")
    path = hf_hub_download(TINY, "config.json", endpoint=sim.url, cache_dir=tmp_path, token=False)
    assert small.content == Path(path).read_bytes()


def test_commit_listings_carry_x_total_count(hubsim_factory: Callable[..., HubSim]) -> None:
    sim = hubsim_factory(at=None, page_size=5)
    response = httpx.get(f"{sim.url}/api/models/{LLAMA2}/commits/main")
    assert response.headers["x-total-count"] == "12" and len(response.json()) == 5
    assert len(HfApi(endpoint=sim.url, token=False).list_repo_commits(LLAMA2)) == 12


@pytest.mark.parametrize("body", [{}, {"branch": "x"}, {"pr": "abc", "at": "v1"}, {"tag": "t", "at": "v99"}])
def test_bad_ref_requests_are_refused(hubsim: HubSim, body: dict[str, object]) -> None:
    assert httpx.post(f"{hubsim.url}/_sim/{LLAMA2}/refs", json=body).status_code in (400, 404)
