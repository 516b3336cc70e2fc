"""Live control (advance, reset, webhooks) and fault injection, seen through the official client."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from huggingface_hub import HfApi, hf_hub_url
from huggingface_hub.errors import HfHubHTTPError

from hubwatch.hubsim import FaultConfig, HubSim
from hubwatch.hubsim.files import BROKEN_JSON

LLAMA2 = "meta-llama/Llama-2-7b-hf"


def test_advance_makes_a_new_commit_appear_at_the_head(hubsim: HubSim) -> None:
    api = HfApi(endpoint=hubsim.url, token=False)
    before = api.model_info(LLAMA2).sha
    assert [c.commit_id for c in api.list_repo_commits(LLAMA2)] == [before]
    new = hubsim.advance(LLAMA2)
    assert new == "e4693182c7c69d5653064c07b378c3517f1739b0" != before
    assert api.model_info(LLAMA2).sha == new
    assert [c.commit_id for c in api.list_repo_commits(LLAMA2)] == [new, before]
    assert api.list_repo_refs(LLAMA2).branches[0].target_commit == new
    meta = api.get_hf_file_metadata(url=hf_hub_url(LLAMA2, "tokenizer_config.json", endpoint=hubsim.url))
    assert meta.commit_hash == new


def test_advance_over_http_until_the_end_then_409(hubsim_factory: Callable[..., HubSim]) -> None:
    sim = hubsim_factory(at="v10")
    first = httpx.post(f"{sim.url}/_sim/meta-llama/Llama-2-7b-hf/advance")
    assert first.status_code == 200
    assert first.json()["version"] == "v11" and first.json()["sha"] == sim.head(LLAMA2)
    assert httpx.post(f"{sim.url}/_sim/meta-llama/Llama-2-7b-hf/advance").json()["version"] == "v12"
    end = httpx.post(f"{sim.url}/_sim/meta-llama/Llama-2-7b-hf/advance")
    assert end.status_code == 409 and end.headers["x-error-code"] and "v12" in end.json()["error"]
    state = httpx.get(f"{sim.url}/_sim/state").json()
    assert state["repos"][LLAMA2]["visible"] == 12
    reset = httpx.post(f"{sim.url}/_sim/reset", json={"at": "v2"})
    assert reset.json()["repos"][LLAMA2]["version"] == "v2"
    httpx.post(f"{sim.url}/_sim/reset")  # back to the start setting
    assert sim.state.snapshot()["repos"][LLAMA2]["version"] == "v10"


def test_a_repo_with_no_visible_version_does_not_exist_yet(hubsim_factory: Callable[..., HubSim],
                                                           tmp_path: Path) -> None:  # fmt: skip
    (tmp_path / "acme__late" / "v3").mkdir(parents=True)
    (tmp_path / "acme__late" / "v3" / "config.json").write_text("{}")
    sim = hubsim_factory(root=tmp_path, at="v2")
    api = HfApi(endpoint=sim.url, token=False)
    assert not api.repo_exists("acme/late") and list(api.list_models()) == []
    sim.advance("acme/late")
    assert api.repo_exists("acme/late") and [m.id for m in api.list_models()] == ["acme/late"]


class _Receiver(BaseHTTPRequestHandler):
    got: ClassVar[list[tuple[dict[str, str], dict[str, Any]]]] = []
    event: ClassVar[threading.Event] = threading.Event()

    def do_POST(self) -> None:  # http.server's method naming
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).got.append((dict(self.headers), json.loads(body)))
        self.send_response(204)
        self.end_headers()
        type(self).event.set()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, type[_Receiver]]]:
    handler = type("Receiver", (_Receiver,), {"got": [], "event": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", handler
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_advance_posts_a_hub_style_webhook(hubsim_factory: Callable[..., HubSim],
                                          receiver: tuple[str, type[_Receiver]]) -> None:  # fmt: skip
    url, handler = receiver
    sim = hubsim_factory(webhook=url, webhook_secret="s3cret")
    old = sim.head(LLAMA2)
    new = sim.advance(LLAMA2)
    assert handler.event.wait(10), "no webhook arrived"
    headers, payload = handler.got[0]
    assert headers["X-Webhook-Secret"] == "s3cret"
    assert payload["event"] == {"action": "update", "scope": "repo.content"}
    assert payload["repo"]["name"] == LLAMA2 and payload["repo"]["headSha"] == new
    assert payload["updatedRefs"] == [{"ref": "refs/heads/main", "oldSha": old, "newSha": new}]
    assert payload["webhook"]["version"] == 3
    assert payload["repo"]["url"]["api"] == f"{sim.url}/api/models/{LLAMA2}"


def test_a_429_surfaces_with_retry_after(hubsim: HubSim) -> None:
    api = HfApi(endpoint=hubsim.url, token=False)
    hubsim.set_faults(rate_limit=1, retry_after=7)
    with pytest.raises(HfHubHTTPError) as info:
        api.model_info(LLAMA2)  # model_info does not retry
    response = info.value.response
    assert response.status_code == 429 and response.headers["retry-after"] == "7"
    assert response.headers["x-error-code"] and response.json()["error"]
    assert api.model_info(LLAMA2).sha == hubsim.head(LLAMA2)  # only the next request was limited


def test_paged_calls_wait_out_a_429(hubsim: HubSim) -> None:
    hubsim.set_faults(rate_limit=1, retry_after=0)
    started = time.monotonic()
    commits = HfApi(endpoint=hubsim.url, token=False).list_repo_commits(LLAMA2)  # http_backoff retries
    assert len(commits) == 1 and time.monotonic() - started >= 1.0  # it slept Retry-After + 1 s


def test_error_rate_and_latency(hubsim: HubSim) -> None:
    hubsim.set_faults(error_rate=1.0, error_status=500)
    r = httpx.get(f"{hubsim.url}/api/models/{LLAMA2}")
    assert r.status_code == 500 and r.headers["x-error-code"] == "ServerError"
    assert httpx.get(f"{hubsim.url}/_sim/state").status_code == 200  # control routes are never faulted
    hubsim.set_faults(FaultConfig(error_rate=0.5, seed=3))
    statuses = [httpx.get(f"{hubsim.url}/api/models/{LLAMA2}").status_code for _ in range(40)]
    assert 5 <= statuses.count(503) <= 35 and statuses.count(200) + statuses.count(503) == 40
    hubsim.set_faults(latency_ms=300)
    started = time.monotonic()
    assert httpx.get(f"{hubsim.url}/api/models/{LLAMA2}").status_code == 200
    assert time.monotonic() - started >= 0.3
    hubsim.set_faults()
    assert httpx.get(f"{hubsim.url}/_sim/faults").json()["latency_ms"] == 0


def test_truncated_body_fails_the_download(hubsim: HubSim, tmp_path: Path) -> None:
    hubsim.set_faults(truncate="config.json", truncate_fraction=0.5)
    url = hf_hub_url(LLAMA2, "config.json", endpoint=hubsim.url)
    full = int(httpx.head(url).headers["content-length"])
    assert len(httpx.get(url).content) == full // 2
    with pytest.raises(OSError, match="Consistency check failed"):
        HfApi(endpoint=hubsim.url, token=False).hf_hub_download(LLAMA2, "config.json", cache_dir=tmp_path)
    other = httpx.get(hf_hub_url(LLAMA2, "generation_config.json", endpoint=hubsim.url))
    assert json.loads(other.content)  # other files are untouched


def test_invalid_json_fault_via_http(hubsim: HubSim, tmp_path: Path) -> None:
    r = httpx.post(f"{hubsim.url}/_sim/faults", json={"invalid_json": f"{LLAMA2}/generation_config.json"})
    assert r.status_code == 200 and r.json()["invalid_json"] == f"{LLAMA2}/generation_config.json"
    local = HfApi(endpoint=hubsim.url, token=False).hf_hub_download(LLAMA2, "generation_config.json",
                                                                   cache_dir=tmp_path)  # fmt: skip
    assert Path(local).read_bytes() == BROKEN_JSON
    with pytest.raises(ValueError):
        json.loads(Path(local).read_bytes())
    bad = httpx.post(f"{hubsim.url}/_sim/faults", json={"error_rate": 2})
    assert bad.status_code == 400 and "error_rate" in bad.json()["error"]
    unknown = httpx.post(f"{hubsim.url}/_sim/faults", json={"eror_rate": 0.1})
    assert unknown.status_code == 400 and "eror_rate" in unknown.json()["error"]
