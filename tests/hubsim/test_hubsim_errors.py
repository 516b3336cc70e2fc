"""Each hub error the client knows, raised by the real client from the emulator's answers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from huggingface_hub import HfApi, hf_hub_url
from huggingface_hub.errors import (
    GatedRepoError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from hubwatch.hubsim import HubSim

LLAMA2 = "meta-llama/Llama-2-7b-hf"
GATED = "hubsim-test/gated-model"
TOKEN = "hf_test_token"  # the content of tests/data/hubsim/hubsim-test__gated-model/GATED


@pytest.fixture
def tiny(hubsim_factory: Callable[..., HubSim], data_dir: Path) -> HubSim:
    return hubsim_factory(root=data_dir / "hubsim", at=None)


def test_missing_repo(hubsim: HubSim, tmp_path: Path) -> None:
    api = HfApi(endpoint=hubsim.url, token=False)
    with pytest.raises(RepositoryNotFoundError) as info:
        api.model_info("nobody/nothing")
    assert not isinstance(info.value, GatedRepoError)
    assert info.value.response.status_code == 404
    assert info.value.response.headers["x-error-code"] == "RepoNotFound"
    assert info.value.response.json() == {"error": "Repository not found: nobody/nothing"}
    with pytest.raises(RepositoryNotFoundError):
        api.hf_hub_download("nobody/nothing", "config.json", cache_dir=tmp_path)
    with pytest.raises(RepositoryNotFoundError):
        api.list_repo_commits("nobody/nothing")
    assert api.repo_exists(LLAMA2) and not api.repo_exists("nobody/nothing")


def test_missing_revision(hubsim: HubSim) -> None:
    api = HfApi(endpoint=hubsim.url, token=False)
    with pytest.raises(RevisionNotFoundError):
        api.model_info(LLAMA2, revision="0" * 40)
    with pytest.raises(RevisionNotFoundError):
        api.list_repo_commits(LLAMA2, revision="no-such-branch")
    with pytest.raises(RevisionNotFoundError):
        api.get_hf_file_metadata(url=hf_hub_url(LLAMA2, "config.json", revision="deadbeef", endpoint=hubsim.url))
    # a later version is not there yet at v1: its sha is unknown until advanced
    later = "e4693182c7c69d5653064c07b378c3517f1739b0"
    assert not api.revision_exists(LLAMA2, later)
    hubsim.advance(LLAMA2)
    assert api.revision_exists(LLAMA2, later)


def test_missing_file(hubsim: HubSim, tmp_path: Path) -> None:
    api = HfApi(endpoint=hubsim.url, token=False)
    with pytest.raises(RemoteEntryNotFoundError):
        api.hf_hub_download(LLAMA2, "no_such_file.json", cache_dir=tmp_path)
    assert not api.file_exists(LLAMA2, "no_such_file.json")
    assert api.file_exists(LLAMA2, "config.json")
    with pytest.raises(RemoteEntryNotFoundError):
        list(api.list_repo_tree(LLAMA2, path_in_repo="no_such_folder"))


def test_gated_repo_without_and_with_a_token(tiny: HubSim, tmp_path: Path) -> None:
    anonymous = HfApi(endpoint=tiny.url, token=False)
    info = anonymous.model_info(GATED)  # like the hub: metadata is public, files are not
    assert info.gated == "manual"
    with pytest.raises(GatedRepoError) as no_token:
        anonymous.hf_hub_download(GATED, "config.json", cache_dir=tmp_path)
    assert no_token.value.response.status_code == 401
    with pytest.raises(GatedRepoError) as wrong:
        HfApi(endpoint=tiny.url, token="hf_wrong").hf_hub_download(GATED, "config.json", cache_dir=tmp_path)
    assert wrong.value.response.status_code == 403
    with pytest.raises(GatedRepoError):
        anonymous.file_exists(GATED, "config.json")  # the client re-raises GatedRepo here
    allowed = HfApi(endpoint=tiny.url, token=TOKEN)
    local = allowed.hf_hub_download(GATED, "config.json", cache_dir=tmp_path)
    expected = Path(tiny.root / "hubsim-test__gated-model" / "v2" / "config.json").read_bytes()
    assert Path(local).read_bytes() == expected


def test_every_error_has_the_hub_shape(hubsim: HubSim) -> None:
    for url in (
        f"{hubsim.url}/api/models/nobody/nothing",
        f"{hubsim.url}/api/models/{LLAMA2}/revision/{'0' * 40}",
        f"{hubsim.url}/{LLAMA2}/resolve/main/missing.txt",
        f"{hubsim.url}/api/models/{LLAMA2}/unknown-route",
        f"{hubsim.url}/not/a/route/at/all",
        f"{hubsim.url}/api/models/{LLAMA2}/commits/main?limit=zero",
    ):
        r = httpx.get(url)
        assert r.status_code >= 400, url
        assert r.headers.get("x-error-code") and r.headers.get("x-error-message"), url
        assert isinstance(r.json()["error"], str), url
    r = httpx.post(f"{hubsim.url}/_sim/nobody/nothing/advance")
    assert r.status_code == 404 and r.headers["x-error-code"] == "RepoNotFound"


def test_bad_limit_is_a_bad_request(hubsim: HubSim) -> None:
    r = httpx.get(f"{hubsim.url}/api/models/{LLAMA2}/commits/main", params={"limit": "0"})
    assert r.status_code == 400 and "limit" in r.json()["error"]
    assert r.headers["x-error-code"] == "BadRequest"
