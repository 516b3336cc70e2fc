"""`hubwatch hubsim` as a user runs it: a child process whose first stdout line gives the URL."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from huggingface_hub import HfApi

from hubwatch.cli import main


def _first_line(proc: subprocess.Popen[str], timeout: float = 30.0) -> str:
    assert proc.stdout is not None
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    assert line, "hubsim printed nothing in time"
    return line[0]


def test_first_line_is_the_url_and_the_server_answers(histories_root: Path) -> None:
    cmd = [sys.executable, "-m", "hubwatch", "hubsim", "--root", str(histories_root), "--port", "0",
           "--at", "v1", "--page-size", "2"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stopped = False
    try:
        line = _first_line(proc)
        match = re.fullmatch(r"hubsim listening on (http://127\.0\.0\.1:(\d+))\n", line)
        assert match, line
        url = match.group(1)
        api = HfApi(endpoint=url, token=False)
        assert api.model_info("tiiuae/falcon-7b").sha == "80b61a69c52975a02865c89eca31a64bda2ac522"
        r = httpx.post(f"{url}/_sim/tiiuae/falcon-7b/advance", timeout=10)
        assert r.json()["version"] == "v2"
        assert len(api.list_repo_commits("tiiuae/falcon-7b")) == 2
        assert len(httpx.get(f"{url}/api/models").json()) == 2  # --page-size applies
        proc.terminate()
        rest, err = proc.communicate(timeout=15)
        stopped = True
        assert rest == ""  # stdout holds only the first line; logs go to stderr
        assert '"GET /api/models/tiiuae/falcon-7b HTTP/1.1" 200' in err
    finally:
        if not stopped:
            proc.terminate()
            proc.wait(timeout=15)


def test_default_root_is_the_bundled_demo() -> None:
    cmd = [sys.executable, "-m", "hubwatch", "hubsim", "--port", "0", "--log-level", "warning"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = _first_line(proc).split()[-1]
        ids = [m.id for m in HfApi(endpoint=url, token=False).list_models()]
        assert ids == ["meta-llama/Llama-2-7b-hf"]
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def _run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(argv)
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def test_bad_root_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run_main(["hubsim", "--root", str(tmp_path), "--port", "0"], capsys)
    assert code == 2 and "no repo folders" in err and out == ""
    code, _, err = _run_main(["hubsim", "--root", str(tmp_path), "--fault-typo", "1"], capsys)
    assert code == 2 and "--fault-typo" in err
    (tmp_path / "acme__m" / "v1").mkdir(parents=True)
    (tmp_path / "acme__m" / "v1" / "weights.json").write_text('{"m.safetensors": {"w": {"dtype": "X", "shape": []}}}')
    code, _, err = _run_main(["hubsim", "--root", str(tmp_path)], capsys)
    assert code == 2 and "unknown dtype 'X'" in err
    code, _, err = _run_main(["hubsim", "--root", str(tmp_path / "missing")], capsys)
    assert code == 2 and "missing" in err
