"""Building from a checkout fails loudly when the design-folder links are plain files, and the sdist
carries what the test suite needs (tests, their data, the benchmarks and docs they read), links kept."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINKED = ("estimator", "feeds", "storage", "tracker")


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in out.decode().split("\0") if name]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the tracked tree (working-tree contents, links kept as links)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    copy = tmp_path / "checkout"
    names = "\0".join(tracked_files()).encode()
    packed = subprocess.run(["tar", "--null", "-T", "-", "-cf", "-"], cwd=ROOT, input=names,
                            capture_output=True, check=True).stdout  # fmt: skip
    copy.mkdir()
    subprocess.run(["tar", "-xf", "-"], cwd=copy, input=packed, check=True)
    return copy


@pytest.mark.parametrize("name", LINKED)
def test_a_link_checked_out_as_a_plain_file_stops_the_build_with_the_fix(checkout: Path, name: str) -> None:
    link = checkout / "hubwatch" / name
    link.unlink()
    link.write_text(f"../{name}", encoding="utf-8")  # what git writes with core.symlinks=false
    out = checkout.parent / "wheels"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "-w", str(out), str(checkout)], capture_output=True, text=True)  # fmt: skip
    assert proc.returncode != 0
    lines = [line.strip() for line in (proc.stdout + proc.stderr).splitlines() if "hubwatch: cannot build" in line]
    assert len(lines) == 1, proc.stdout + proc.stderr
    assert f"hubwatch/{name} is a plain file, not a link to ../{name}" in lines[0]
    assert "git config core.symlinks true" in lines[0]
    assert not list(out.glob("*.whl"))


def test_the_sdist_holds_the_test_suite_and_keeps_the_links(checkout: Path) -> None:
    out = checkout.parent / "dist"
    script = f"from setuptools import build_meta; print(build_meta.build_sdist({str(out)!r}))"
    proc = subprocess.run([sys.executable, "-c", script], cwd=checkout, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with tarfile.open(out / proc.stdout.strip().splitlines()[-1]) as sdist:
        members = {m.name.split("/", 1)[1]: m for m in sdist.getmembers() if "/" in m.name}
    for name in LINKED:
        assert members[f"hubwatch/{name}"].issym() and members[f"hubwatch/{name}"].linkname == f"../{name}"
    wanted = [f for f in tracked_files() if f != ".gitignore" and not f.startswith(tuple(f"hubwatch/{n}/" for n in LINKED))]
    missing = sorted(f for f in wanted if f not in members)
    assert not missing, f"tracked files missing from the sdist: {missing[:20]}"
    assert not any("__pycache__" in name for name in members)
    for needed in ("tests/conftest.py", "tests/test_layout.py", "benchmarks/bench_extra.py", "docs/development.md"):
        assert needed in members
