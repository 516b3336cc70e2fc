"""`hubwatch estimate` on a local target that is no config: exit 2, one line naming the file and what is
wrong, and a fix (README, "Exit codes")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hubwatch.cli import main

FIX_JSON = "fix: correct the JSON (a config.json is one JSON object), or point at the model's config.json"
FIX_MISSING = "fix: check the path: a target is a config.json path, a folder holding config.json, or org/name on the hub"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["estimate", *args])
    return int(exit_info.value.code or 0), capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "content", "problem", "fix"),
    [
        ("bad.json", '{\n  "model_type": "llama",\n  "hidden_size": 64\n  "num_hidden_layers": 2\n}\n',
         "not JSON (line 4, column 3: Expecting ',' delimiter)", FIX_JSON),
        ("empty.json", "", "empty file, not JSON", FIX_JSON),
        ("blank.json", " \n", "empty file, not JSON", FIX_JSON),
        ("list.json", '[{"model_type": "llama"}]', "a JSON array, not a config object",
         'fix: pass a model config: one JSON object, such as {"model_type": "llama", "hidden_size": 4096, …}'),
        ("number.json", "42", "a JSON number, not a config object", "fix: pass a model config"),
        ("latin1.json", b'{"model_type": "caf\xe9"}', "not UTF-8 text (byte 19: invalid continuation byte), so not JSON",
         FIX_JSON),
    ],
)
def test_a_file_that_is_no_config_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch:
                                               pytest.MonkeyPatch, name: str, content: str | bytes, problem: str,
                                               fix: str) -> None:
    monkeypatch.chdir(tmp_path)
    Path(name).write_bytes(content.encode() if isinstance(content, str) else content)
    code, out = run(capsys, name)
    assert code == 2
    lines = out.splitlines()
    assert lines[0] == f"error: {name}: {problem}"
    assert lines[1].startswith(fix) and len(lines) == 2


def test_a_missing_file_and_a_folder_without_config(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "missing.json") == (2, f"error: missing.json: no such file\n{FIX_MISSING}\n")
    Path("model").mkdir()
    code, out = run(capsys, "model")
    assert (code, out) == (2, "error: model: the folder has no config.json\n"
                              "fix: point at a model folder that holds config.json, or at the config file itself\n")
    Path("model/config.json").write_text('{"model_type": "llama",}')
    code, out = run(capsys, "model")
    assert code == 2
    assert out.splitlines() == [
        "error: model/config.json: not JSON (line 1, column 24: Expecting property name enclosed in double quotes)",
        FIX_JSON]
    code, out = run(capsys, "model/config.json", "--json")
    assert code == 2
    assert json.loads(out) == [{"target": "model/config.json", "error": "model/config.json: not JSON (line 1, column 24: "
                                "Expecting property name enclosed in double quotes)", "fix": FIX_JSON[len("fix: "):]}]


def test_a_bad_target_beside_good_ones_still_exits_2(capsys: pytest.CaptureFixture[str], data_dir: Path,
                                                     tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    good = str(data_dir / "configs" / "openai-community__gpt2" / "config.json")
    code, out = run(capsys, good, str(bad))
    assert code == 2
    assert "0.12 B" in out and f"error: {bad}: a JSON array, not a config object\nfix: pass a model config" in out


def test_the_installed_command_exits_2(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    proc = subprocess.run([sys.executable, "-m", "hubwatch", "estimate", "bad.json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout.splitlines() == [
        "error: bad.json: not JSON (line 1, column 2: Expecting property name enclosed in double quotes)", FIX_JSON]
