"""`hubwatch check --fix --branch NAME [--commit]` in a real temporary git repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "pincheck"))
from check_formats_helpers import L1, L2, T1, run_check, run_hubwatch  # noqa: E402

PIN = f'm = AutoModel.from_pretrained("acme/llama-small", revision="{L2}")\n'


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def make_repo(tmp_path: Path, text: str = PIN) -> Path:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "train.py").write_text(text)
    (repo / "README.md").write_text("a model\n")
    git(repo, "init", "--quiet", "--initial-branch", "main")
    git(repo, "config", "user.name", "CI")
    git(repo, "config", "user.email", "ci@example.com")
    git(repo, "config", "commit.gpgsign", "false")
    git(repo, "add", ".")
    git(repo, "commit", "--quiet", "-m", "start")
    return repo


def test_branch_and_commit_name_each_pin_and_what_it_resolves(advised_store_url: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "README.md").write_text("a model, edited\n")  # the user's own change: never committed by hubwatch
    result = run_check(advised_store_url, "src", "--fix", "--branch", "hubwatch/pins", "--commit", "--json",
                       cwd=repo, HUBWATCH_PUBLIC_URL="https://hw.example")
    assert result.exit_code == 0, result.output  # after the move only a medium update is left: below the gate
    assert git(repo, "branch", "--show-current").strip() == "hubwatch/pins"
    assert git(repo, "show", "main:src/train.py") == PIN  # main untouched
    assert (repo / "src" / "train.py").read_text() == PIN.replace(L2, L1)
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["src/train.py"]
    assert git(repo, "status", "--porcelain").strip() == "M README.md"
    message = git(repo, "log", "-1", "--format=%B")
    hazard = next(a["id"] for p in json.loads(result.stdout)["pins"] for a in p["advisories"]
                  if a["direction"] == "hazard")
    assert message.startswith("hubwatch: move 1 model pin (acme/llama-small)\n")
    assert f"- train.py:1: acme/llama-small 89abcdef0123 -> {L1}\n  resolves {hazard}\n" in message
    assert "compare: https://hw.example/models/acme/llama-small/compare/89abcdef0123...0123456789ab" in message


def test_branch_without_commit_leaves_the_rewrite_uncommitted(advised_store_url: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    result = run_check(advised_store_url, ".", "--fix", "--branch", "bump", cwd=repo)
    assert result.exit_code == 0, result.output
    assert git(repo, "branch", "--show-current").strip() == "bump"
    assert git(repo, "log", "--format=%s").splitlines() == ["start"]
    assert git(repo, "status", "--porcelain").strip() == "M src/train.py"


def test_nothing_to_move_makes_no_branch(advised_store_url: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path, f'm = AutoModel.from_pretrained("acme/tiny", revision="{T1}")\n')
    result = run_check(advised_store_url, ".", "--fix", "--branch", "bump", "--commit", cwd=repo)
    assert result.exit_code == 0 and "nothing to move: branch bump not created" in result.output
    assert git(repo, "branch", "--list").split() == ["*", "main"]


def test_refusals_write_nothing(advised_store_url: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    git(repo, "branch", "taken")
    exists = run_hubwatch(advised_store_url, "check", ".", "--fix", "--branch", "taken", cwd=repo)
    assert exists.returncode == 2 and "error: branch taken exists already" in exists.stderr
    assert "fix: delete it" in exists.stderr
    (repo / "src" / "train.py").write_text(PIN + "# my edit\n")
    dirty = run_hubwatch(advised_store_url, "check", ".", "--fix", "--branch", "bump", "--commit", cwd=repo)
    assert dirty.returncode == 2 and "uncommitted changes, which --commit would carry: src/train.py" in dirty.stderr
    assert (repo / "src" / "train.py").read_text() == PIN + "# my edit\n"
    assert git(repo, "branch", "--show-current").strip() == "main"
    bad = run_hubwatch(advised_store_url, "check", ".", "--fix", "--branch", "no..dots", cwd=repo)
    assert bad.returncode == 2 and "not a valid branch name" in bad.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "train.py").write_text(PIN)
    outside = run_hubwatch(advised_store_url, "check", ".", "--fix", "--branch", "bump", cwd=plain,
                           GIT_CEILING_DIRECTORIES=str(tmp_path))
    assert outside.returncode == 2 and "is not inside a git work tree" in outside.stderr
    assert (plain / "train.py").read_text() == PIN


def test_branch_and_commit_usage(advised_store_url: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    no_fix = run_check(advised_store_url, ".", "--branch", "bump", cwd=repo)
    assert no_fix.exit_code == 2 and "--branch goes with --fix" in no_fix.output
    dry = run_check(advised_store_url, ".", "--fix", "--dry-run", "--branch", "bump", cwd=repo)
    assert dry.exit_code == 2
    commit = run_check(advised_store_url, ".", "--fix", "--commit", cwd=repo)
    assert commit.exit_code == 2 and "--commit goes with --fix --branch" in commit.output
    assert git(repo, "status", "--porcelain") == ""
