"""`hubwatch demo` and `hubwatch run` as a user starts them: real processes, real HTTP."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

QWEN = "Qwen/Qwen-7B"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(url: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""


def wait_for(check: Callable[[], bool], what: str, proc: subprocess.Popen[str], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"process exited ({proc.returncode}) before {what}:\n{out}\n{err}")
        time.sleep(0.3)
    pytest.fail(f"timed out waiting for {what}")


def history_len(base: str, repo: str) -> int:
    status, body = get(f"{base}/api/v1/models/{repo}/history")
    if status != 200:
        return 0
    data = json.loads(body)
    return len(data if isinstance(data, list) else data.get("revisions", []))


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HUBWATCH_", "HF_"))}

    def launch(*args: str, **extra_env: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hubwatch", *args],
            cwd=tmp_path, env={**env, "HF_HUB_OFFLINE": "0", **extra_env},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        procs.append(proc)
        return proc

    yield launch
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_demo_replays_the_bundled_history_offline(start: Any, tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = start("demo", "--port", str(port), "--every", "0.3")
    wait_for(lambda: get(f"{base}/healthz")[0] == 200, "the web app", proc)
    wait_for(lambda: history_len(base, "meta-llama/Llama-2-7b-hf") == 12, "all 12 revisions", proc)
    status, page = get(f"{base}/models/meta-llama/Llama-2-7b-hf")
    assert status == 200 and b"max_position_embeddings" in page
    status, feed = get(f"{base}/models/meta-llama/Llama-2-7b-hf/feed.atom")
    assert status == 200 and b"<feed" in feed
    status, org = get(f"{base}/orgs/meta-llama")
    assert status == 200 and b'href="/models/meta-llama/Llama-2-7b-hf"' in org
    query = json.dumps({"package": {"ecosystem": "GIT", "name": "https://huggingface.co/meta-llama/Llama-2-7b-hf"}})
    status, osv = get(f"{base}/v1/query", data=query.encode(), headers={"content-type": "application/json"})
    assert status == 200 and json.loads(osv)["vulns"]
    assert (tmp_path / "hubwatch.db").is_file()  # the default SQLite file in the working folder
    time.sleep(1.0)  # the last commit is stored just before the demo says it is done
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert f"{base}/models/meta-llama/Llama-2-7b-hf" in err and f"{base}/orgs/meta-llama" in err
    assert "fully replayed" in err


def test_run_polls_on_schedule_and_on_webhook(start: Any, tmp_path: Path, hubsim: Any) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        "HUBWATCH_DATABASE_URL": f"sqlite:///{tmp_path / 'run.db'}",
        "HUBWATCH_HUB_ENDPOINT": hubsim.url,
        "HUBWATCH_PORT": str(port),
        "HUBWATCH_POLL_INTERVAL_S": "3600",
        "HUBWATCH_WEBHOOK_SECRET": "s3cret",
    }
    watch = start("watch", "add", QWEN, **env)
    assert watch.wait(timeout=60) == 0
    proc = start("run", **env)
    wait_for(lambda: history_len(base, QWEN) == 1, "the first scheduled poll", proc)
    hubsim.advance(QWEN)
    payload = {"event": {"action": "update", "scope": "repo.content"}, "repo": {"type": "model", "name": QWEN}}
    status, body = get(
        f"{base}/webhooks/hub",
        data=json.dumps(payload).encode(),
        headers={"content-type": "application/json", "x-webhook-secret": "s3cret"},
    )
    assert status == 202, body
    wait_for(lambda: history_len(base, QWEN) == 2, "the poll the webhook triggers", proc, timeout=60)


def test_serve_with_workers_shares_the_port_between_processes(start: Any, tmp_path: Path) -> None:
    """`hubwatch serve --workers 2`: each worker builds the app from the environment's settings and
    opens the store itself; both answer on the one port, and the processes stop on Ctrl-C."""
    from hubwatch.domain.records import RepoId
    from hubwatch.storage import Store

    url = f"sqlite:///{tmp_path / 'w.db'}"
    with Store.open(url) as store:
        store.watch(RepoId("org", "served"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = start("serve", "--workers", "2", HUBWATCH_DATABASE_URL=url, HUBWATCH_PORT=str(port))
    wait_for(lambda: get(f"{base}/healthz")[0] == 200, "the web app", proc)
    status, page = get(f"{base}/models/org/served")
    assert status == 200 and b"No revision stored yet" in page
    # Answers are not held back by Nagle's algorithm (each would wait ~40 ms for a delayed ACK)
    import httpx

    with httpx.Client(base_url=base) as client:
        times = []
        for _ in range(10):
            began = time.perf_counter()
            assert client.get("/healthz").status_code == 200
            times.append(time.perf_counter() - began)
    assert min(times) < 0.02, times
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert f"web app on {base}/ (2 workers)" in err
