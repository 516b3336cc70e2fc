"""File resolve: downloads, metadata headers, ranges and safetensors headers through huggingface_hub."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from huggingface_hub import HfApi, hf_hub_url

from hubwatch.hubsim import HubSim
from hubwatch.hubsim.repos import git_blob_sha1

LLAMA2 = "meta-llama/Llama-2-7b-hf"
TINY = "hubsim-test/tiny-llama"


@pytest.fixture
def tiny(hubsim_factory: Callable[..., HubSim], data_dir: Path) -> HubSim:
    return hubsim_factory(root=data_dir / "hubsim", at=None)


def test_download_matches_the_history_file(hubsim_factory: Callable[..., HubSim], histories_root: Path,
                                           tmp_path: Path) -> None:  # fmt: skip
    sim = hubsim_factory(at="v6")
    api = HfApi(endpoint=sim.url, token=False)
    local = api.hf_hub_download(LLAMA2, "config.json", cache_dir=tmp_path)
    expected = (histories_root / "meta-llama__Llama-2-7b-hf" / "v6" / "config.json").read_bytes()
    assert Path(local).read_bytes() == expected
    # an older revision by full sha, into the same cache
    v1_sha = api.list_repo_commits(LLAMA2)[-1].commit_id
    old = api.hf_hub_download(LLAMA2, "config.json", revision=v1_sha, cache_dir=tmp_path)
    assert Path(old).read_bytes() == (histories_root / "meta-llama__Llama-2-7b-hf" / "v1" / "config.json").read_bytes()
    assert v1_sha in old


def test_file_metadata_headers(hubsim: HubSim, histories_root: Path) -> None:
    api = HfApi(endpoint=hubsim.url, token=False)
    meta = api.get_hf_file_metadata(url=hf_hub_url(LLAMA2, "config.json", endpoint=hubsim.url))
    content = (histories_root / "meta-llama__Llama-2-7b-hf" / "v1" / "config.json").read_bytes()
    assert meta.commit_hash == hubsim.head(LLAMA2)
    assert meta.etag == git_blob_sha1(content)
    assert meta.size == len(content)
    assert meta.xet_file_data is None
    head = httpx.head(hf_hub_url(LLAMA2, "config.json", endpoint=hubsim.url))
    assert "x-xet-hash" not in head.headers and head.headers["x-repo-commit"] == hubsim.head(LLAMA2)


def test_lfs_file_metadata_uses_linked_headers(tiny: HubSim) -> None:
    api = HfApi(endpoint=tiny.url, token=False)
    info = api.model_info(TINY, files_metadata=True)
    assert info.siblings is not None
    shard = next(s for s in info.siblings if s.rfilename == "model-00002-of-00002.safetensors")
    meta = api.get_hf_file_metadata(url=hf_hub_url(TINY, shard.rfilename, endpoint=tiny.url))
    assert shard.lfs is not None
    assert meta.etag == shard.lfs.sha256 and meta.size == shard.size and meta.commit_hash == info.sha
    head = httpx.head(hf_hub_url(TINY, shard.rfilename, endpoint=tiny.url))
    assert head.headers["x-linked-size"] == str(shard.size)
    assert head.headers["x-linked-etag"] == f'"{shard.lfs.sha256}"'


def test_parse_safetensors_header_of_a_synthesised_file(tiny: HubSim) -> None:
    api = HfApi(endpoint=tiny.url, token=False)
    meta = api.parse_safetensors_file_metadata(TINY, "model-00002-of-00002.safetensors")
    assert meta.metadata == {"format": "pt"}
    assert meta.tensors["lm_head.weight"].dtype == "BF16"
    assert meta.tensors["lm_head.weight"].shape == [128256, 16384]
    assert meta.parameter_count == {"BF16": 128256 * 16384 + 64}
    v1 = api.parse_safetensors_file_metadata(TINY, "model.safetensors", revision="1" * 40)
    assert v1.tensors["model.norm.weight"].dtype == "F32"


def test_get_safetensors_metadata_of_a_sharded_repo(tiny: HubSim) -> None:
    api = HfApi(endpoint=tiny.url, token=False)
    meta = api.get_safetensors_metadata(TINY)
    assert meta.sharded and set(meta.files_metadata) == {
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
    }
    assert meta.weight_map["lm_head.weight"] == "model-00002-of-00002.safetensors"
    one_call = api.get_sharded_safetensors_metadata(TINY)
    assert one_call.parameter_count == meta.parameter_count


def test_large_header_needs_the_second_range_request(hubsim_factory: Callable[..., HubSim], tmp_path: Path) -> None:
    tensors = {f"model.layers.{i}.mlp.weight_with_a_long_name": {"dtype": "F16", "shape": [4096, 4096]}
               for i in range(3000)}  # fmt: skip
    version = tmp_path / "acme__wide" / "v1"
    version.mkdir(parents=True)
    (version / "weights.json").write_text(json.dumps({"model.safetensors": tensors}))
    sim = hubsim_factory(root=tmp_path, at=None)
    url = hf_hub_url("acme/wide", "model.safetensors", endpoint=sim.url)
    (n,) = struct.unpack("<Q", httpx.get(url, headers={"Range": "bytes=0-7"}).content)
    assert n > 100_000  # so the client must ask for bytes 8..n+7
    meta = HfApi(endpoint=sim.url, token=False).parse_safetensors_file_metadata("acme/wide", "model.safetensors")
    assert len(meta.tensors) == 3000 and meta.parameter_count == {"F16": 3000 * 4096 * 4096}


def test_ranges(tiny: HubSim) -> None:
    url = hf_hub_url(TINY, "model-00002-of-00002.safetensors", endpoint=tiny.url)
    size = int(httpx.head(url).headers["content-length"])
    r = httpx.get(url, headers={"Range": "bytes=0-99"})
    assert r.status_code == 206 and len(r.content) == 100
    assert r.headers["content-range"] == f"bytes 0-99/{size}"
    tail = httpx.get(url, headers={"Range": "bytes=-16"})
    assert tail.status_code == 206 and tail.content == bytes(16)
    assert tail.headers["content-range"] == f"bytes {size - 16}-{size - 1}/{size}"
    open_end = httpx.get(url, headers={"Range": f"bytes={size - 3}-"})
    assert len(open_end.content) == 3
    bad = httpx.get(url, headers={"Range": f"bytes={size}-"})
    assert bad.status_code == 416 and bad.headers["content-range"] == f"bytes */{size}"
    assert bad.headers["x-error-code"] and bad.json()["error"]


def test_full_get_of_a_small_synthesised_file_is_consistent(tiny: HubSim, tmp_path: Path) -> None:
    api = HfApi(endpoint=tiny.url, token=False)
    local = Path(api.hf_hub_download(TINY, "model-00001-of-00002.safetensors", cache_dir=tmp_path))
    body = local.read_bytes()
    (n,) = struct.unpack("<Q", body[:8])
    header = json.loads(body[8 : 8 + n])
    end = max(v["data_offsets"][1] for k, v in header.items() if k != "__metadata__")
    assert len(body) == 8 + n + end and body[8 + n :] == bytes(end)


def test_snapshot_download_of_a_revision(tiny: HubSim, tmp_path: Path) -> None:
    api = HfApi(endpoint=tiny.url, token=False)
    folder = Path(api.snapshot_download(TINY, revision="1" * 40, cache_dir=tmp_path))
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "config.json", "model.safetensors"]
    assert (folder / "config.json").read_bytes() == (tiny.root / "hubsim-test__tiny-llama/v1/config.json").read_bytes()
