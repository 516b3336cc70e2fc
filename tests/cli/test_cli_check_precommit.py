"""The `hubwatch-check` pre-commit hook (.pre-commit-hooks.yaml), run by `pre-commit try-repo` against this
project: pre-commit installs hubwatch into a hook environment of its own (language: python, by pip) and
runs it in a repository holding a pin; it fails on a pin failing the gate and passes on a clean one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parents[1] / "pincheck"))
from check_formats_helpers import L2, T1  # noqa: E402

ROOT = Path(__file__).parents[2]
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A clone of this project's HEAD carrying the working tree's hook file (what a user's pre-commit
    fetches), and one PRE_COMMIT_HOME for the module, so the hook's environment is installed once."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: pre-commit try-repo needs one")
    base = tmp_path_factory.mktemp("precommit")
    clone = base / "hubwatch"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", clone / ".pre-commit-hooks.yaml")
    git(clone, "add", ".pre-commit-hooks.yaml")
    if git(clone, "status", "--porcelain").strip():
        git(clone, "commit", "--quiet", "-m", "the working tree's hook file")
    return clone, base / "home"


def try_repo(hook_repo: tuple[Path, Path], url: str, project: Path) -> subprocess.CompletedProcess[str]:
    clone, home = hook_repo
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HUBWATCH_", "PRE_COMMIT", "GIT_"))}
    env |= {"HUBWATCH_DATABASE_URL": url, "PRE_COMMIT_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run([str(PRE_COMMIT), "try-repo", str(clone), "hubwatch-check", "--all-files"], cwd=project,
                          env=env, capture_output=True, text=True, timeout=1200)


def project(tmp_path: Path, revision: str, repo: str) -> Path:
    folder = tmp_path / "app"
    folder.mkdir(parents=True)
    (folder / "train.py").write_text(f'AutoModel.from_pretrained("{repo}", revision="{revision}")\n')
    subprocess.run(["git", "init", "--quiet", str(folder)], check=True)
    git(folder, "add", ".")
    return folder


def test_the_hook_fails_on_a_failing_pin_and_passes_on_a_clean_one(hook_repo: tuple[Path, Path],
                                                                   advised_store_url: str, tmp_path: Path) -> None:
    failing = try_repo(hook_repo, advised_store_url, project(tmp_path / "a", L2, "acme/llama-small"))
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "hubwatch check (pinned model revisions)" in failing.stdout and "Failed" in failing.stdout
    assert "FAILS: high hazard x_HUBWATCH-" in failing.stdout
    clean = try_repo(hook_repo, advised_store_url, project(tmp_path / "b", T1, "acme/tiny"))
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Passed" in clean.stdout


def test_the_hook_definition() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "hubwatch-check" and hook["entry"] == "hubwatch check"
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    import re

    files = re.compile(hook["files"])
    assert all(files.search(p) for p in ["src/train.py", "nb.ipynb", "cfg/eval.yaml", "Dockerfile", "run.sh",
                                         "requirements.txt", "pyproject.toml", ".env", "Makefile", "ops/data.mk"])
    assert not any(files.search(p) for p in ["README.md", "image.png", "src/model.safetensors"])
