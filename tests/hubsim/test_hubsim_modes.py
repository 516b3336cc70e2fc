"""The real hub's answers the plain emulator never gives (`hubsim/modes.py`), through the official
client: a repo deleted while running, `RateLimit` windows, dropped connections, bad tokens and
disabled repos — each switched on and off while the emulator runs, as `--fault NAME=VALUE` does."""

from __future__ import annotations

import re
import time

import httpx2
import pytest
from huggingface_hub import HfApi, get_session, hf_hub_url
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

from hubwatch.hubsim import HubSim
from hubwatch.hubsim.modes import BAD_TOKEN, DISABLED

LLAMA2 = "meta-llama/Llama-2-7b-hf"
GEMMA = "google/gemma-2b-it"


def _listed(api: HfApi) -> set[str]:
    return {m.id for m in api.list_models(sort="last_modified")}


def test_a_repo_deleted_while_running_is_gone_from_every_route_and_the_listing(hubsim: HubSim) -> None:
    api = HfApi(endpoint=hubsim.url, token=False)
    before = _listed(api)
    assert {LLAMA2, GEMMA} <= before and api.repo_exists(LLAMA2)
    hubsim.set_faults(deleted="meta-llama/*")
    with pytest.raises(RepositoryNotFoundError):
        api.model_info(LLAMA2)
    with pytest.raises(RepositoryNotFoundError):
        api.model_info(LLAMA2.upper())  # the hub matches ids case-insensitively, and so does the mode
    with pytest.raises(RepositoryNotFoundError):
        api.list_repo_commits(LLAMA2)
    with pytest.raises(RepositoryNotFoundError):
        api.get_hf_file_metadata(url=hf_hub_url(LLAMA2, "config.json", endpoint=hubsim.url))
    after = _listed(api)
    assert LLAMA2 not in after and after == {r for r in before if not r.startswith("meta-llama/")}
    assert LLAMA2 not in {m.id for m in api.list_models(search="llama")}
    assert api.model_info(GEMMA).id == GEMMA  # the others are untouched
    hubsim.set_faults()  # restored (as if undeleted): back in the listing and on its routes
    assert _listed(api) == before and api.model_info(LLAMA2).sha == hubsim.head(LLAMA2)


def test_ratelimit_headers_on_every_answer_and_a_429_once_the_window_is_spent(hubsim: HubSim) -> None:
    api = HfApi(endpoint=hubsim.url, token=False)
    hubsim.set_faults(ratelimit_quota=2, ratelimit_window_s=2)
    session = get_session()
    first = session.get(f"{hubsim.url}/api/models/{LLAMA2}")
    second = session.get(hf_hub_url(LLAMA2, "config.json", endpoint=hubsim.url), follow_redirects=True)
    assert first.status_code == second.status_code == 200
    assert re.fullmatch(r'"api";r=1;t=[12]', first.headers["ratelimit"]), first.headers["ratelimit"]
    assert re.fullmatch(r'"resolvers";r=0;t=[12]', second.headers["ratelimit"]), second.headers["ratelimit"]
    assert first.headers["ratelimit-policy"] == '"fixed window";"api";q=2;w=2'
    with pytest.raises(HfHubHTTPError) as info:
        api.model_info(LLAMA2)  # the window's quota is used: 429 until it resets
    spent = info.value.response
    assert spent.status_code == 429 and 1 <= int(spent.headers["retry-after"]) <= 2
    assert re.fullmatch(r'"api";r=0;t=[12]', spent.headers["ratelimit"])
    time.sleep(float(spent.headers["retry-after"]) + 0.1)
    assert api.model_info(LLAMA2).sha == hubsim.head(LLAMA2)  # a new window
    hubsim.set_faults()
    assert "ratelimit" not in session.get(f"{hubsim.url}/api/models/{LLAMA2}").headers


def test_reset_rate_drops_connections_after_the_headers(hubsim: HubSim) -> None:
    api = HfApi(endpoint=hubsim.url, token=False)
    hubsim.set_faults(reset_rate=1.0)
    with pytest.raises(httpx2.HTTPError):
        api.model_info(LLAMA2)  # no body comes: the library's HTTP client (httpx2) sees the connection go
    hubsim.set_faults(reset_rate=0.5)
    outcomes = []
    for _ in range(30):
        try:
            outcomes.append(api.model_info(LLAMA2).sha == hubsim.head(LLAMA2))
        except httpx2.HTTPError:
            outcomes.append(False)
    assert 3 <= outcomes.count(True) <= 27, outcomes  # some answers whole, some dropped
    hubsim.set_faults()
    assert api.model_info(LLAMA2).sha == hubsim.head(LLAMA2)


def test_invalid_token_and_disabled_repos_answer_like_the_hub(hubsim: HubSim) -> None:
    hubsim.set_faults(invalid_token="hf_revoked")
    with pytest.raises(HfHubHTTPError) as info:
        HfApi(endpoint=hubsim.url, token="hf_revoked").model_info(LLAMA2)
    assert info.value.response.status_code == 401 and BAD_TOKEN in info.value.response.text
    assert HfApi(endpoint=hubsim.url, token="hf_other").model_info(LLAMA2).id == LLAMA2
    hubsim.set_faults(disabled=GEMMA)
    with pytest.raises(HfHubHTTPError) as info:
        HfApi(endpoint=hubsim.url, token=False).model_info(GEMMA)
    assert info.value.response.status_code == 403 and DISABLED in info.value.response.text
