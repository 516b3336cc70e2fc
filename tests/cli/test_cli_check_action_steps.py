"""action.yml itself, its steps run one after another as the Actions runner runs a composite action
(`bash -eo pipefail`, the step's env with `${{ inputs.* }}` filled in from the defaults, GITHUB_ACTION_PATH
a copy of this project, RUNNER_TEMP a fresh folder): hubwatch is installed by pip into its own virtual
environment, and the check writes the SARIF report and the step's outputs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import fill_advised_store

sys.path.insert(0, str(Path(__file__).parents[1] / "pincheck"))
from check_formats_helpers import L2  # noqa: E402

ROOT = Path(__file__).parents[2]


def fill(text: str, inputs: dict[str, str]) -> str:
    """`${{ inputs.NAME }}` and `${{ github.token }}` as the runner fills them in."""
    text = text.replace("${{ github.token }}", "")
    return re.sub(r"\$\{\{ inputs\.([a-z-]+) \}\}", lambda m: inputs[m.group(1)], text)


def test_the_composite_action_installs_hubwatch_and_writes_the_report(tmp_path: Path) -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    # one SQLite store: what is tested is the action's install and run, not the store (pip runs once)
    advised_store_url = f"sqlite:///{tmp_path / 'store.db'}"
    fill_advised_store(advised_store_url)
    action_path = tmp_path / "action"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(action_path)], check=True)
    shutil.copy(ROOT / "action.yml", action_path / "action.yml")  # the working tree's, committed or not
    shutil.copytree(ROOT / "action", action_path / "action", dirs_exist_ok=True)
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "train.py").write_text(f'm = AutoModel.from_pretrained("acme/llama-small", revision="{L2}")\n')
    spec = yaml.safe_load((action_path / "action.yml").read_text())
    inputs = {name: fill(str(field.get("default", "")), {}) for name, field in spec["inputs"].items()}
    outputs = tmp_path / "github_output"
    outputs.write_text("")
    (tmp_path / "runner").mkdir()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "HUBWATCH_", "VIRTUAL_ENV"))}
    base["PATH"] = os.pathsep.join(p for p in base.get("PATH", "").split(os.pathsep) if ".venv" not in p)
    base |= {"GITHUB_ACTION_PATH": str(action_path), "RUNNER_TEMP": str(tmp_path / "runner"),
             "GITHUB_WORKSPACE": str(work), "GITHUB_OUTPUT": str(outputs), "HUBWATCH_DATABASE_URL": advised_store_url}
    codes = []
    for step in spec["runs"]["steps"]:
        step_env = base | {k: fill(str(v), inputs) for k, v in step.get("env", {}).items()}
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", fill(step["run"], inputs)],
                              cwd=work, env=step_env, capture_output=True, text=True, timeout=1200)
        codes.append(done.returncode)
        if done.returncode not in (0, 1):
            raise AssertionError(f"step {step['name']!r} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    assert codes == [0, 1]  # installed; the pin fails the gate
    assert (tmp_path / "runner" / "hubwatch-venv" / "bin" / "hubwatch").exists()
    log = json.loads((work / inputs["sarif-file"]).read_text())
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["hubwatch/pickle"]
    assert dict(line.split("=", 1) for line in outputs.read_text().splitlines()) == \
        {"failed": "true", "sarif-file": "hubwatch.sarif"}
