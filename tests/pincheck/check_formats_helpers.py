"""Shared by the CI-format tests: a small project of pins over the advised store, and running `check` on it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result
from conftest import ADVISED_SHAS

from hubwatch.cli import _register, cli

__all__ = ["L1", "L2", "T1", "UNKNOWN", "make_project", "run_check", "run_hubwatch"]

L1, L2, T1 = ADVISED_SHAS["L1"], ADVISED_SHAS["L2"], ADVISED_SHAS["T1"]
UNKNOWN = "abababababababababababababababababababab"


def make_project(root: Path, above: int = 0) -> Path:
    """app.py: a failing pin (L2: high hazard), an affected one below the gate (L1: medium update), a clean
    one, an unknown commit and an unpinned use; `above` blank lines first (lines move, pins do not)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text("\n" * above + "\n".join([
        "from transformers import AutoModel",
        f'a = AutoModel.from_pretrained("acme/llama-small", revision="{L2}")',
        f'b = AutoModel.from_pretrained("acme/llama-small", revision="{L1}")',
        f'c = AutoModel.from_pretrained("acme/tiny", revision="{T1}")',
        f'd = AutoModel.from_pretrained("acme/tiny", revision="{UNKNOWN}")',
        'e = AutoModel.from_pretrained("acme/tiny")',
    ]) + "\n", encoding="utf-8")
    return root


def run_check(url: str, *args: str, cwd: Path | None = None, **env: str | None) -> Result:
    """`hubwatch check ARGS` on the store at `url`; `cwd`: the working folder (SARIF paths are relative to it)."""
    _register()
    runner = CliRunner()
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return runner.invoke(cli, ["check", *args], env={"HUBWATCH_DATABASE_URL": url, "COLUMNS": "200",
                                                          "HUBWATCH_PUBLIC_URL": None, "GITHUB_STEP_SUMMARY": None,
                                                          **env})
    finally:
        os.chdir(old)


def run_hubwatch(url: str, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The installed `hubwatch` script as a user runs it (errors mapped to exit codes and one-line messages)."""
    full = {k: v for k, v in os.environ.items() if k not in ("HUBWATCH_PUBLIC_URL", "GITHUB_STEP_SUMMARY")}
    full |= {"HUBWATCH_DATABASE_URL": url, "COLUMNS": "200", **env}
    script = Path(sys.executable).with_name("hubwatch")
    return subprocess.run([str(script), *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=120)
