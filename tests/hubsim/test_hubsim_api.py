"""The emulator's JSON API through the official huggingface_hub client (never patched)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from huggingface_hub import HfApi
from huggingface_hub.hf_api import RepoFile, RepoFolder

from hubwatch.hubsim import HubSim

LLAMA2 = "meta-llama/Llama-2-7b-hf"
TINY = "hubsim-test/tiny-llama"


@pytest.fixture
def tiny(hubsim_factory: Callable[..., HubSim], data_dir: Path) -> HubSim:
    return hubsim_factory(root=data_dir / "hubsim", at=None)


def _api(sim: HubSim, token: str | bool = False) -> HfApi:
    return HfApi(endpoint=sim.url, token=token)


def test_model_info_with_files_metadata(hubsim: HubSim, histories_root: Path) -> None:
    info = _api(hubsim).model_info(LLAMA2, files_metadata=True)
    assert info.id == LLAMA2 and info.sha == "637a748546bb9abca62b0684183cc362bc1ece6d"
    assert info.last_modified is not None and info.last_modified.date().isoformat() == "2023-07-18"
    assert info.gated is False
    assert info.siblings is not None
    files = {s.rfilename: s for s in info.siblings}
    config = (histories_root / "meta-llama__Llama-2-7b-hf" / "v1" / "config.json").read_bytes()
    assert files["config.json"].size == len(config)
    assert files["config.json"].blob_id is not None and len(files["config.json"].blob_id) == 40
    assert files["config.json"].lfs is None
    assert info.config is not None and info.config["model_type"] == "llama"
    plain = _api(hubsim).model_info(LLAMA2)
    assert plain.siblings is not None and plain.siblings[0].size is None  # sizes only with blobs=True


def test_model_info_card_data_lfs_and_safetensors(tiny: HubSim) -> None:
    api = _api(tiny)
    info = api.model_info(TINY, files_metadata=True)
    assert info.card_data is not None and info.card_data.license == "llama3.1"
    assert info.pipeline_tag == "text-generation" and info.tags == ["llama", "test"]
    assert info.siblings is not None
    shard = next(s for s in info.siblings if s.rfilename == "model-00002-of-00002.safetensors")
    assert shard.lfs is not None and shard.lfs.size == shard.size and len(shard.lfs.sha256) == 64
    assert shard.lfs.pointer_size > 100
    assert info.safetensors is not None and info.safetensors.parameters["BF16"] == info.safetensors.total
    assert "weights.json" not in {s.rfilename for s in info.siblings}
    v1 = api.model_info(TINY, revision="1111111")  # unique prefix
    assert v1.sha == "1" * 40 and v1.card_data is not None and v1.card_data.license == "apache-2.0"
    assert v1.safetensors is not None and set(v1.safetensors.parameters) == {"F32"}
    expanded = api.model_info(TINY, expand=["sha", "lastModified"])
    assert expanded.sha == info.sha and expanded.siblings is None


def test_commits_newest_first_across_pages(hubsim_factory: Callable[..., HubSim], histories_root: Path) -> None:
    sim = hubsim_factory(at=None, page_size=5)
    commits = _api(sim).list_repo_commits(LLAMA2)
    tsv = (histories_root / "meta-llama__Llama-2-7b-hf" / "HISTORY.tsv").read_text().splitlines()[1:]
    expected = [line.split("\t")[2] for line in reversed(tsv)]
    assert [c.commit_id for c in commits] == expected  # 12 commits over 3 pages
    assert commits[0].title == "Update generation_config.json" and commits[0].authors == ["meta-llama"]
    assert commits[0].created_at > commits[-1].created_at
    # the Link header is what carries the paging
    r = httpx.get(f"{sim.url}/api/models/{LLAMA2}/commits/main")
    assert len(r.json()) == 5 and 'rel="next"' in r.headers["link"] and "p=1" in r.headers["link"]
    # a past revision lists its own ancestry
    older = _api(sim).list_repo_commits(LLAMA2, revision=expected[9])
    assert [c.commit_id for c in older] == expected[9:]


def test_commits_page_size_from_query(hubsim_factory: Callable[..., HubSim]) -> None:
    sim = hubsim_factory(at=None)
    r = httpx.get(f"{sim.url}/api/models/{LLAMA2}/commits/main", params={"limit": 4})
    assert len(r.json()) == 4
    nxt = r.links["next"]["url"]
    r2 = httpx.get(nxt)
    assert len(r2.json()) == 4 and r2.json()[0]["id"] != r.json()[0]["id"]


def test_refs_point_main_at_the_head(hubsim: HubSim) -> None:
    refs = _api(hubsim).list_repo_refs(LLAMA2)
    assert [(b.name, b.ref, b.target_commit) for b in refs.branches] == [
        ("main", "refs/heads/main", hubsim.head(LLAMA2))
    ]
    assert refs.tags == [] and refs.converts == []


def test_tree_recursive_expand_and_paging(hubsim_factory: Callable[..., HubSim], data_dir: Path) -> None:
    sim = hubsim_factory(root=data_dir / "hubsim", at=None, page_size=2)
    api = _api(sim)
    entries = list(api.list_repo_tree(TINY, recursive=True))
    paths = [e.path for e in entries]
    assert "additional_chat_templates" in paths and "additional_chat_templates/tool_use.jinja" in paths
    assert len(paths) == len(set(paths)) == 8  # 7 files + 1 folder, over 4 pages
    top = {e.path for e in api.list_repo_tree(TINY)}
    assert "additional_chat_templates/tool_use.jinja" not in top and "additional_chat_templates" in top
    inside = [e.path for e in api.list_repo_tree(TINY, path_in_repo="additional_chat_templates")]
    assert inside == ["additional_chat_templates/tool_use.jinja"]
    expanded = {e.path: e for e in api.list_repo_tree(TINY, recursive=True, expand=True)}
    config = expanded["config.json"]
    assert isinstance(config, RepoFile) and config.last_commit is not None
    commits = api.list_repo_commits(TINY)
    assert config.last_commit.oid == commits[1].commit_id  # bf16 switch in v2, unchanged in v3
    template = expanded["additional_chat_templates/tool_use.jinja"]
    assert isinstance(template, RepoFile) and template.last_commit is not None
    assert template.last_commit.oid == commits[0].commit_id
    st = expanded["model-00001-of-00002.safetensors"]
    assert isinstance(st, RepoFile) and st.lfs is not None and st.security is not None
    assert isinstance(expanded["additional_chat_templates"], RepoFolder)


def test_paths_info(tiny: HubSim) -> None:
    infos = _api(tiny).get_paths_info(
        TINY, ["config.json", "additional_chat_templates", "missing.json", "pytorch_model.bin"], expand=True
    )
    by_path = {i.path: i for i in infos}
    assert set(by_path) == {"config.json", "additional_chat_templates", "pytorch_model.bin"}
    binary = by_path["pytorch_model.bin"]
    assert isinstance(binary, RepoFile) and binary.lfs is not None and binary.last_commit is not None
    assert isinstance(by_path["additional_chat_templates"], RepoFolder)


def test_listing_newest_first_with_paging(hubsim_factory: Callable[..., HubSim]) -> None:
    sim = hubsim_factory(at=None, page_size=4)
    api = _api(sim)
    models = list(api.list_models(sort="last_modified", expand=["sha", "lastModified"]))
    assert len(models) == 22  # every history + the demo, over 6 pages
    stamps = [m.last_modified for m in models]
    assert stamps == sorted(stamps, reverse=True)  # type: ignore[type-var]
    assert all(m.sha is not None and len(m.sha) == 40 for m in models)
    first3 = list(api.list_models(sort="last_modified", limit=3))
    assert [m.id for m in first3] == [m.id for m in models[:3]]
    assert [m.id for m in api.list_models(author="tiiuae")] != []
    assert all(m.id.startswith("tiiuae/") for m in api.list_models(author="tiiuae"))


def test_listing_shows_an_advanced_repo_first(hubsim: HubSim) -> None:
    api = _api(hubsim)
    before = next(iter(api.list_models(sort="last_modified", limit=1, expand=["sha"])))
    assert before.id != "tiiuae/falcon-7b"
    sha = hubsim.advance("tiiuae/falcon-7b")
    top = next(iter(api.list_models(sort="last_modified", limit=1, expand=["sha", "lastModified"])))
    assert (top.id, top.sha) == ("tiiuae/falcon-7b", sha)


def test_model_info_json_has_hub_field_names(hubsim: HubSim) -> None:
    raw: dict[str, Any] = httpx.get(f"{hubsim.url}/api/models/{LLAMA2}", params={"blobs": "true"}).json()
    for key in ("id", "sha", "lastModified", "createdAt", "private", "gated", "siblings", "config", "usedStorage"):
        assert key in raw
    assert raw["lastModified"].endswith("Z") and "cardData" not in raw  # no README in this history
    assert {"rfilename", "size", "blobId"} <= set(raw["siblings"][0])
    assert json.loads(json.dumps(raw)) == raw
