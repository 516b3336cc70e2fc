"""The GitHub Action's script (action/hubwatch-action.sh) run here as the Actions runner would run it:
the inputs and GitHub's variables as environment variables, in a real git clone; with `fix: true` the
pin-bump branch and commit, and the pull request asked of a stand-in for the GitHub API on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parents[1] / "pincheck"))
from check_formats_helpers import L1, L2  # noqa: E402

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "action" / "hubwatch-action.sh"
PIN = f'm = AutoModel.from_pretrained("acme/llama-small", revision="{L2}")\n'


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def clone(tmp_path: Path) -> tuple[Path, Path]:
    """A bare 'origin' with one commit holding a failing pin, and a clone of it (the runner's checkout)."""
    seed, origin, work = tmp_path / "seed", tmp_path / "origin.git", tmp_path / "work"
    (seed / "src").mkdir(parents=True)
    (seed / "src" / "train.py").write_text(PIN)
    git(seed, "init", "--quiet", "--initial-branch", "main")
    git(seed, "add", ".")
    git(seed, "-c", "user.name=dev", "-c", "user.email=dev@example.com", "commit", "--quiet", "-m", "start")
    subprocess.run(["git", "clone", "--quiet", "--bare", str(seed), str(origin)], check=True)
    subprocess.run(["git", "clone", "--quiet", str(origin), str(work)], check=True)
    return origin, work


def action(url: str, work: Path, tmp_path: Path, github: dict[str, str] | None = None,
           **inputs: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """The script with `inputs` as INPUT_* and GitHub's variables (`github`: more of them)."""
    outputs = tmp_path / "github_output"
    outputs.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "GIT_", "HUBWATCH_"))}
    env |= {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
            "HUBWATCH_DATABASE_URL": url, "HUBWATCH_PUBLIC_URL": "https://hw.example",
            "GITHUB_WORKSPACE": str(work), "GITHUB_OUTPUT": str(outputs),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_REF_NAME": "main",
            "GIT_CONFIG_GLOBAL": str(tmp_path / "no-gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
            **(github or {}), **{f"INPUT_{k.upper()}": v for k, v in inputs.items()}}
    done = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=300)
    said = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    return done, said


def test_sarif_report_outputs_and_summary(advised_store_url: str, tmp_path: Path) -> None:
    _, work = clone(tmp_path)
    done, said = action(advised_store_url, work, tmp_path)
    assert done.returncode == 1, done.stderr  # the pin fails the gate
    assert said == {"failed": "true", "sarif-file": "hubwatch.sarif"}
    log = json.loads((work / "hubwatch.sarif").read_text())
    (result,) = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/train.py"
    assert (tmp_path / "summary.md").read_text().startswith("## hubwatch: ❌ 1 pin fails the gate")
    assert git(work, "branch", "--show-current").strip() == "main"  # no fix asked: nothing else done


def test_fix_without_a_token_commits_and_says_what_it_would_open(advised_store_url: str, tmp_path: Path) -> None:
    origin, work = clone(tmp_path)
    done, said = action(advised_store_url, work, tmp_path, fix="true", format="junit", sarif_file="hubwatch.xml")
    assert done.returncode == 1, done.stderr
    assert "would push hubwatch/pin-bump and open a pull request into main" in done.stdout
    assert "title: hubwatch: move 1 model pin (acme/llama-small)" in done.stdout
    assert "### Pins moved" in done.stdout and "[compare](<https://hw.example/models/acme/llama-small/compare/" \
        in done.stdout
    assert git(work, "branch", "--show-current").strip() == "hubwatch/pin-bump"
    assert git(work, "show", "HEAD:src/train.py") == PIN.replace(L2, L1)
    assert git(work, "log", "-1", "--format=%an").strip() == "github-actions[bot]"
    assert "pin-bump" not in git(origin, "branch", "--list")  # nothing pushed
    assert "pull-request" not in said


class _FakeGitHub(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append({"path": self.path, "auth": self.headers["Authorization"], "body": body})
        answer = json.dumps({"html_url": "https://github.example/acme/app/pull/7"}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def fake_github() -> Iterator[str]:
    _FakeGitHub.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeGitHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_fix_with_a_token_pushes_and_opens_the_pull_request(advised_store_url: str, tmp_path: Path,
                                                            fake_github: str) -> None:
    origin, work = clone(tmp_path)
    done, said = action(advised_store_url, work, tmp_path, {"GITHUB_REPOSITORY": "acme/app",
                                                            "GITHUB_API_URL": fake_github}, fix="true", token="t0ken")
    assert done.returncode == 1, done.stderr
    assert "hubwatch-action: opened https://github.example/acme/app/pull/7" in done.stdout
    assert said["pull-request"] == "https://github.example/acme/app/pull/7"
    assert git(origin, "show", "hubwatch/pin-bump:src/train.py") == PIN.replace(L2, L1)  # pushed
    (request,) = _FakeGitHub.seen
    assert request["path"] == "/repos/acme/app/pulls" and request["auth"] == "Bearer t0ken"
    body = request["body"]
    assert (body["head"], body["base"]) == ("hubwatch/pin-bump", "main")
    assert body["title"] == "hubwatch: move 1 model pin (acme/llama-small)"
    assert "| src/train.py\\:1 acme/llama-small | 89abcdef0123 | 0123456789ab |" in body["body"]
    assert "/advisories/x_HUBWATCH-" in body["body"] and "compare/89abcdef0123...0123456789ab" in body["body"]


def test_action_yml_maps_every_input_to_the_script() -> None:
    spec = yaml.safe_load((ROOT / "action.yml").read_text())
    assert spec["runs"]["using"] == "composite"
    steps = spec["runs"]["steps"]
    env = {k: v for step in steps for k, v in step.get("env", {}).items()}
    mapped = {v.removeprefix("${{ inputs.").removesuffix(" }}"): k for k, v in env.items() if "inputs." in v}
    assert set(mapped) == set(spec["inputs"])  # every input reaches a step
    script = SCRIPT.read_text()
    assert all(name in script or name == "INPUT_HUBWATCH" for name in mapped.values())
    assert steps[-1]["run"].endswith('bash "$GITHUB_ACTION_PATH/action/hubwatch-action.sh"')
    assert "$RUNNER_TEMP/hubwatch-venv/bin:$PATH" in steps[-1]["run"] and "hubwatch-venv/bin/pip" in steps[0]["run"]
    assert spec["inputs"]["format"]["default"] == "sarif"
    assert set(spec["outputs"]) == {"sarif-file", "failed", "pull-request"}
    assert all(f"output {name} " in script for name in spec["outputs"])
