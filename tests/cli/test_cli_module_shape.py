"""Every runtime module says what it is for in its first line and declares its public names in `__all__`."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PARTS = {"hubwatch": "hubwatch", "tracker": "hubwatch.tracker", "estimator": "hubwatch.estimator",
         "storage": "hubwatch.storage", "feeds": "hubwatch.feeds"}  # fmt: skip
# Scripts run by a tool, not imported for their names: `python -m hubwatch`, the command registry, Alembic.
SCRIPTS = ("hubwatch/__main__.py", "hubwatch/cli/commands.py", "storage/migrations/")


def modules() -> list[tuple[str, Path]]:
    out = []
    for folder, package in PARTS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join((package, *parts[:-1])) if parts[-1] == "__init__" else ".".join((package, *parts))
            out.append((name, path))
    return [(n, p) for n, p in out if not p.relative_to(ROOT).as_posix().startswith(SCRIPTS)]


def public_definitions(tree: ast.Module) -> set[str]:
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    return {n for n in names if not n.startswith("_")}


@pytest.mark.parametrize(("name", "path"), modules(), ids=[n for n, _ in modules()])
def test_docstring_and_all(name: str, path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree)
    assert doc and doc.splitlines()[0].strip(), f"{path}: the first line must be a docstring saying what it is for"
    if not public_definitions(tree) and path.name == "__init__.py":
        return  # a package marker with no names of its own
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list), f"{path}: no __all__"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{path}: __all__ names what the module lacks: {missing}"


def test_the_walk_finds_the_modules() -> None:
    names = {n for n, _ in modules()}
    assert {"hubwatch.settings", "hubwatch.tracker.hub", "hubwatch.storage.store", "hubwatch.diff"} <= names
    assert "hubwatch.cli.commands" not in names
