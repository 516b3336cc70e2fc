"""docs/ci.md's examples, run as far as this machine allows: the GitHub workflows' action step through the
action's script, the GitLab job's command, the pre-commit config's hook and arguments, and the plain
shell example, each against a real hubwatch web app (check_servers.web_app) over the advised store."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import junitparser
import yaml
from check_servers import web_app  # noqa: F401

sys.path.insert(0, str(Path(__file__).parents[1] / "pincheck"))
from check_formats_helpers import L1, L2  # noqa: E402

from hubwatch.cli.check import _FORMATS  # noqa: E402

ROOT = Path(__file__).parents[2]
DOC = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
PIN = f'm = AutoModel.from_pretrained("acme/llama-small", revision="{L2}")\n'


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC, re.S)


def env(server: str, **more: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "GIT_", "HUBWATCH_"))}
    return base | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{base.get('PATH', '')}",
                   "HUBWATCH_SERVER": server, "HUBWATCH_DATABASE_URL": "sqlite:////nonexistent/never-used.db",
                   "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", **more}


def repo(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "train.py").write_text(PIN)
    for args in (["init", "--quiet", "--initial-branch", "main"], ["add", "."],
                 ["-c", "user.name=dev", "-c", "user.email=dev@example.com", "commit", "--quiet", "-m", "start"]):
        subprocess.run(["git", "-C", str(work), *args], check=True, capture_output=True)
    return work


def hubwatch_step(workflow: dict[str, Any]) -> dict[str, Any]:
    (job,) = workflow["jobs"].values()
    return next(s for s in job["steps"] if "/hubwatch@" in s.get("uses", ""))


def test_the_documented_workflows_use_the_action_as_it_is(web_app: str, tmp_path: Path) -> None:  # noqa: F811
    scan, bump = (yaml.safe_load(b) for b in blocks("yaml")[:2])
    for workflow in (scan, bump):
        steps = next(iter(workflow["jobs"].values()))["steps"]
        assert steps[0]["uses"].startswith("actions/checkout@")
        assert set(hubwatch_step(workflow)["with"]) <= set(ACTION["inputs"])
    upload = next(s for s in next(iter(scan["jobs"].values()))["steps"] if "upload-sarif" in s.get("uses", ""))
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@") and upload["if"] == "always()"
    assert upload["with"]["sarif_file"] == hubwatch_step(scan)["with"]["sarif-file"]
    assert scan["permissions"]["security-events"] == "write"
    assert bump["permissions"] == {"contents": "write", "pull-requests": "write"}
    # the scan workflow's step, as the runner would run it (its server: the web app here)
    inputs = {k: str(v) for k, v in hubwatch_step(scan)["with"].items()} | {"server": web_app}
    work = repo(tmp_path)
    done = subprocess.run(["bash", str(ROOT / "action" / "hubwatch-action.sh")], capture_output=True, text=True,
                          env=env(web_app, GITHUB_WORKSPACE=str(work),
                                  **{f"INPUT_{k.upper().replace('-', '_')}": v for k, v in inputs.items()}),
                          timeout=300)
    assert done.returncode == 1, done.stderr
    assert '"ruleId": "hubwatch/pickle"' in (work / upload["with"]["sarif_file"]).read_text()


def test_the_documented_action_inputs_are_the_actions() -> None:
    table = DOC.split("## GitHub Actions")[1].split("Outputs:")[0]
    assert set(re.findall(r"^\| `([a-z-]+)` \|", table, re.M)) == set(ACTION["inputs"])
    assert all(f"`{name}`" in DOC for name in ACTION["outputs"])
    assert all(f"| `{fmt}`" in DOC for fmt in _FORMATS)


def test_the_gitlab_job_writes_the_junit_report_it_names(web_app: str, tmp_path: Path) -> None:  # noqa: F811
    (job,) = yaml.safe_load(blocks("yaml")[2]).values()
    assert job["artifacts"]["when"] == "always"
    command = next(line for line in job["script"] if line.startswith("hubwatch check"))
    work = repo(tmp_path)
    done = subprocess.run(["bash", "-c", command], cwd=work, env=env(web_app), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1, done.stderr
    (suite,) = list(junitparser.JUnitXml.fromfile(str(work / job["artifacts"]["reports"]["junit"])))
    assert suite.failures == 1 and [c.name for c in suite] == ["acme/llama-small@89abcdef0123 (line 1)"]


def test_the_precommit_config_names_the_hook_with_arguments_check_takes(web_app: str,  # noqa: F811
                                                                         tmp_path: Path) -> None:
    config = yaml.safe_load(blocks("yaml")[3])
    (hook,) = config["repos"][0]["hooks"]
    (defined,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == defined["id"] == "hubwatch-check"
    work = repo(tmp_path)
    args = [web_app if a.startswith("https://") else a for a in hook["args"]]
    done = subprocess.run([*defined["entry"].split(), *args], cwd=work, env=env(web_app), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1 and "FAILS: high hazard" in done.stdout, done.stderr


def test_the_plain_shell_example_gates_reports_and_commits_the_bump(web_app: str, tmp_path: Path) -> None:  # noqa: F811
    (script,) = blocks("sh")[1:]
    work = repo(tmp_path)
    done = subprocess.run(["sh", "-c", script], cwd=work, capture_output=True, text=True, timeout=300,
                          env=env(web_app, GIT_AUTHOR_NAME="ci", GIT_AUTHOR_EMAIL="ci@example.com",
                                  GIT_COMMITTER_NAME="ci", GIT_COMMITTER_EMAIL="ci@example.com"))
    assert done.returncode == 1, done.stdout + done.stderr  # the pins as they were fail
    assert (work / "hubwatch.md").read_text().startswith("## hubwatch: ❌ 1 pin fails the gate")
    branch = subprocess.run(["git", "-C", str(work), "branch", "--show-current"], capture_output=True, text=True)
    assert branch.stdout.strip() == "hubwatch/pin-bump"
    assert (work / "src" / "train.py").read_text() == PIN.replace(L2, L1)
    message = done.stdout[done.stdout.index("hubwatch: move 1 model pin"):]
    documented = DOC.split("with a message naming each pin moved")[1].split("```")[1].strip("\n")
    shape = [re.sub(r"\S+", "W", line) for line in documented.splitlines()]
    assert [re.sub(r"\S+", "W", line) for line in message.strip().splitlines()] == shape
    assert f"compare: {web_app}/models/acme/llama-small/compare/89abcdef0123...0123456789ab" in message
