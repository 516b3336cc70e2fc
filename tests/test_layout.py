"""The layout a maintainer relies on: the map in docs/development.md lists exactly the package's
rooms, and the wheel the container installs holds every module and data file of the source tree."""

from __future__ import annotations

import os
import pkgutil
import re
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

import hubwatch

ROOT = Path(__file__).resolve().parents[1]
MAP = ROOT / "docs" / "development.md"
ROW = re.compile(r"^\| `(hubwatch\.[a-z_]+)` \| `([^`]+)` \|", re.M)


def documented_rooms() -> dict[str, str]:
    text = MAP.read_text(encoding="utf-8")
    return {name: folder for name, folder in ROW.findall(text.split("## Contracts")[0])}


def package_rooms() -> set[str]:
    return {f"hubwatch.{m.name}" for m in pkgutil.iter_modules(hubwatch.__path__) if m.name != "__main__"}


def test_the_map_lists_every_room_and_nothing_else() -> None:
    documented = documented_rooms()
    assert set(documented) == package_rooms(), (
        "docs/development.md's room table and the package differ: "
        f"undocumented {sorted(package_rooms() - set(documented))}, gone {sorted(set(documented) - package_rooms())}"
    )
    for name, folder in documented.items():
        assert (ROOT / folder).exists(), f"{name}: {folder} does not exist"


def test_design_folders_answer_to_one_name_only() -> None:
    # Importing a linked folder under its top-level name would make a second copy of every class.
    for part in ("storage", "tracker", "estimator", "feeds"):
        proc = subprocess.run([sys.executable, "-c", f"import {part}"], cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode != 0
        assert f"import hubwatch.{part}, not {part}" in proc.stderr


def source_modules() -> set[str]:
    """Every module of the source tree by its installed name (links followed, as the build does)."""
    found: set[str] = set()
    for top, dirs, files in os.walk(ROOT / "hubwatch", followlinks=True):
        rel = Path(top).relative_to(ROOT)
        if "__init__.py" not in files:
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                parts = rel.parts if name == "__init__.py" else (*rel.parts, name[:-3])
                found.add(".".join(parts))
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
                   check=True, capture_output=True)  # fmt: skip
    (built,) = out.glob("hubwatch-*.whl")
    return built


def test_the_wheel_holds_every_module_and_data_file(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    in_wheel = {n[:-3].replace("/", ".").removesuffix(".__init__") for n in names if n.endswith(".py")}
    missing = source_modules() - in_wheel
    assert not missing, f"modules missing from the wheel: {sorted(missing)}"
    for data in ("hubwatch/advisories/osv-schema.json", "hubwatch/storage/alembic.ini",
                 "hubwatch/storage/migrations/script.py.mako", "hubwatch/feeds/static/style.css",
                 "hubwatch/hubsim/demo/meta-llama__Llama-2-7b-hf/HISTORY.tsv"):  # fmt: skip
        assert data in names, f"{data} missing from the wheel"
    assert not any(n.startswith(("tracker/", "storage/", "feeds/", "estimator/", "tests/")) for n in names)


def test_the_wheel_alone_imports_every_module(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True)  # fmt: skip
    # The dependencies come from the test install's site-packages on PYTHONPATH (its .pth files,
    # the editable hubwatch among them, are not read there); hubwatch itself only from the wheel.
    deps = sysconfig.get_paths()["purelib"]
    script = (
        "import importlib, pkgutil, hubwatch, sys\n"
        "assert hubwatch.__file__.startswith(sys.prefix), hubwatch.__file__\n"
        "names = sorted(m.name for m in pkgutil.walk_packages(hubwatch.__path__, 'hubwatch.')"
        " if '.migrations.versions.' not in m.name"
        " and m.name not in ('hubwatch.__main__', 'hubwatch.storage.migrations.env'))\n"
        "for name in names: importlib.import_module(name)\n"
        "print(len(names))\n"
    )
    proc = subprocess.run([str(python), "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": deps})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    scripts = {"hubwatch", "hubwatch.__main__", "hubwatch.storage.migrations.env"}
    expected = {m for m in source_modules() if ".migrations.versions." not in m} - scripts
    assert int(proc.stdout.strip()) == len(expected)


README = ROOT / "README.md"
README_ROOM = re.compile(r"`([^`]+)` \(`(hubwatch\.[a-z_]+)`")


def test_the_readme_layout_lists_the_rooms_of_the_map() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    listed = {name: folder for folder, name in README_ROOM.findall(section)}
    assert listed == documented_rooms(), (
        "README's Layout section and docs/development.md's room table differ: "
        f"{sorted(set(listed.items()) ^ set(documented_rooms().items()))}"
    )
