"""Force-pushes in the emulator: `rewind` (main back to an older version) and `squash`
(`super_squash_history`: one commit without a parent), seen through the official client."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import RevisionNotFoundError

from hubwatch.hubsim import HubSim

LLAMA2 = "meta-llama/Llama-2-7b-hf"


def listed(api: HfApi) -> list[str]:
    return [c.commit_id for c in api.list_repo_commits(LLAMA2)]


def test_rewind_drops_the_newest_commits_and_advance_pushes_them_back(hubsim_factory: Callable[..., HubSim]) -> None:
    sim = hubsim_factory(at="v5")
    api = HfApi(endpoint=sim.url, token=False)
    five = listed(api)
    answer = httpx.post(f"{sim.url}/_sim/meta-llama/Llama-2-7b-hf/rewind", json={"to": "v3"})
    assert answer.status_code == 200 and answer.json()["version"] == "v3"
    assert listed(api) == five[2:] and api.model_info(LLAMA2).sha == five[2] == answer.json()["sha"]
    assert sim.advance(LLAMA2) == five[1]  # pushed back, one at a time
    # Only backwards, to a version main shows: a clear 409/400 otherwise.
    for body, status in (({"to": "v4"}, 409), ({"to": "v9"}, 409), ({"to": "soon"}, 400), ({}, 400)):
        wrong = httpx.post(f"{sim.url}/_sim/meta-llama/Llama-2-7b-hf/rewind", json=body)
        assert wrong.status_code == status, body
        assert wrong.json()["error"]


def test_squash_leaves_one_commit_with_the_heads_files(hubsim_factory: Callable[..., HubSim], tmp_path: object) -> None:
    sim = hubsim_factory(at="v4")
    api = HfApi(endpoint=sim.url, token=False)
    old = listed(api)
    config = hf_hub_download(LLAMA2, "config.json", revision=old[0], endpoint=sim.url, token=False,
                             cache_dir=str(tmp_path) + "/a")
    answer = httpx.post(f"{sim.url}/_sim/meta-llama/Llama-2-7b-hf/squash")
    assert answer.status_code == 200
    squashed = answer.json()["sha"]
    (only,) = api.list_repo_commits(LLAMA2)
    assert only.commit_id == squashed == api.model_info(LLAMA2).sha and squashed not in old
    assert only.title == "Super-squash branch 'main' using huggingface_hub"
    again = hf_hub_download(LLAMA2, "config.json", revision=squashed, endpoint=sim.url, token=False,
                            cache_dir=str(tmp_path) + "/b")
    assert open(again, "rb").read() == open(config, "rb").read()
    with pytest.raises(RevisionNotFoundError):  # the old commits are gone from the hub
        api.model_info(LLAMA2, revision=old[1])
    # Later versions follow the squash; a second squash is another commit; reset brings it all back.
    after = sim.advance(LLAMA2)
    assert listed(api) == [after, squashed]
    assert sim.squash(LLAMA2) not in (squashed, after)
    sim.reset()
    assert listed(api) == old
