"""Finds pinned (and unpinned) model revisions in a code base, without running any of it."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from hubwatch.domain.records import RepoId, RepoType
from hubwatch.pincheck.pins_make import scan_make
from hubwatch.pincheck.pins_notebook import scan_notebook
from hubwatch.pincheck.pins_python import scan_python
from hubwatch.pincheck.pins_shell import scan_shell
from hubwatch.pincheck.pins_text import Found, drop_weak, find_hf_urls, line_starts, scan_toml
from hubwatch.pincheck.pins_yaml import scan_yaml

__all__ = ["Pin", "ScanReport", "pin_kind", "scan_path", "scan_text"]

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "env", "node_modules", "__pycache__", ".tox", ".nox",
     ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", "build", "dist", ".eggs"}
)
MAX_BYTES = 2_000_000
_HEX = re.compile(r"[0-9a-f]{7,40}")
_FLOATING = frozenset({"main", "master", "head"})


@dataclass(frozen=True)
class Pin:
    """One use of a hub model in the scanned code: where, which repo, which revision."""

    path: str  # relative to the scanned root, with '/'
    line: int  # 1-based (within the cell for notebooks)
    repo: RepoId
    revision: str | None  # None: no revision given
    style: str  # python, hf-url, url, yaml, json, toml, cli, env, text
    cell: int | None = None  # notebook cell number (1-based)
    dynamic: bool = False  # the revision is computed at run time; we do not evaluate code
    # Where the revision is written: (start, end) character offsets into the file's text (UTF-8
    # decoded), so `check --fix` can rewrite exactly that; None when it is not written plainly.
    span: tuple[int, int] | None = None
    repo_type: str = "model"  # "dataset" for a dataset repo (`load_dataset`, repo_type="dataset")

    def __post_init__(self) -> None:
        # One truth for the repo's type: a dataset pin's repo is the dataset's RepoId (however it was given).
        if self.repo_type == RepoType.DATASET.value and not self.repo.is_dataset:
            object.__setattr__(self, "repo", RepoId(self.repo.org, self.repo.name, RepoType.DATASET))
        elif self.repo.is_dataset:
            object.__setattr__(self, "repo_type", RepoType.DATASET.value)

    @property
    def name(self) -> str:
        """The repo as the hub's URLs name it: `org/name` for a model, `datasets/org/name` for a dataset."""
        return str(self.repo)

    @property
    def where(self) -> str:
        cell = f" (cell {self.cell})" if self.cell is not None else ""
        return f"{self.path}:{self.line}{cell}"

    @property
    def kind(self) -> str:
        return pin_kind(self.revision, self.dynamic)


def pin_kind(revision: str | None, dynamic: bool = False) -> str:
    """`commit` (hex, ≥7), `unpinned` (none or main), `ref` (another branch or tag), `dynamic`."""
    if dynamic:
        return "dynamic"
    if revision is None or revision.strip().lower() in _FLOATING:
        return "unpinned"
    return "commit" if _HEX.fullmatch(revision) else "ref"


@dataclass(frozen=True)
class ScanReport:
    pins: tuple[Pin, ...]
    skipped: tuple[tuple[str, str], ...] = field(default=())  # (path, why) for files not fully read
    files_scanned: int = 0


def _style_of(name: str) -> str | None:
    lower = name.lower()
    if lower.endswith(".py"):
        return "python"
    if lower.endswith(".ipynb"):
        return "notebook"
    if lower.endswith((".yaml", ".yml")):
        return "yaml"
    if lower.endswith(".json"):
        return "json"
    if lower.endswith(".toml"):
        return "toml"
    if lower.endswith((".sh", ".bash", ".zsh")) or lower == "dockerfile" or lower.startswith("dockerfile.") \
            or lower.endswith((".dockerfile", ".containerfile")) or lower == "containerfile":
        return "shell"
    if lower in ("makefile", "gnumakefile") or lower.endswith(".mk"):
        return "make"
    if lower == ".env" or lower.startswith(".env.") or lower.endswith(".env"):
        return "env"
    if lower.endswith(".txt") and (lower.startswith(("requirements", "constraints")) or lower.endswith(".in.txt")):
        return "text"
    if lower.endswith(".in") and lower.startswith("requirements"):
        return "text"
    return None


def _text_urls(text: str) -> list[Found]:
    """hub URLs (`git+https://huggingface.co/ORG/NAME@REV`, `…/resolve/REV/…`) in a requirements-style file."""
    starts = line_starts(text)
    return [f for number, line in enumerate(text.split("\n"), start=1) if not line.lstrip().startswith("#")
            for f in find_hf_urls(line, number, "text", starts[number - 1])]


def _settle(found: list[Found], text: str, weak_dropped: bool) -> list[Found]:
    """Findings as reported: a span kept only where it holds the revision; weak findings settled (drop_weak)."""
    checked = [f if f.span is None or text[f.span[0]:f.span[1]] == f.revision else replace(f, span=None)
               for f in found]
    return checked if weak_dropped else drop_weak(checked)


def scan_text(text: str, rel: str, style: str) -> tuple[list[Pin], list[tuple[str, str]]]:
    """Pins in one file's text; `style` as returned for its name (python, yaml, json, …)."""
    skipped: list[tuple[str, str]] = []
    found: list[Found]
    if style == "python":
        found, problem = scan_python(text)
    elif style in ("yaml", "json"):
        found, problem = scan_yaml(text, style)
    elif style == "toml":
        found, problem = scan_toml(text)
    elif style in ("shell", "env"):
        found, problem = scan_shell(text)[0], None
    elif style == "make":
        found, problem = scan_make(text), None
    elif style == "text":
        found, problem = _text_urls(text), None
    elif style == "notebook":
        found, problem = scan_notebook(text)
    else:
        raise ValueError(f"unknown file style {style!r}")
    if problem:
        skipped.append((rel, problem))
    pins = []
    for f in _settle(found, text, weak_dropped=style == "notebook"):
        try:
            repo = RepoId.parse(f.repo, RepoType.DATASET if f.repo_type == RepoType.DATASET.value else None)
        except ValueError:
            continue
        pins.append(Pin(rel, f.line, repo, f.revision, f.style, f.cell, f.dynamic, f.span, f.repo_type))
    return pins, skipped


def scan_path(root: Path) -> ScanReport:
    """Every pin under `root` (a folder or one file), sorted by file and line."""
    root = Path(root)
    if not root.exists():
        raise FileNotFoundError(f"{root}: no such file or folder to scan")
    if root.is_file():
        files = [(root, root.name)]
    else:
        files = []
        for folder, dirs, names in os.walk(root, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
            for name in sorted(names):
                full = Path(folder) / name
                files.append((full, full.relative_to(root).as_posix()))
    pins: list[Pin] = []
    skipped: list[tuple[str, str]] = []
    scanned = 0
    for full, rel in files:
        style = _style_of(full.name)
        if style is None or full.is_symlink():
            continue
        size = full.stat().st_size
        if size > MAX_BYTES:
            skipped.append((rel, f"larger than {MAX_BYTES // 1_000_000} MB"))
            continue
        text = full.read_bytes().decode("utf-8", errors="replace")
        scanned += 1
        found, problems = scan_text(text, rel, style)
        pins += found
        skipped += problems
    pins.sort(key=lambda p: (p.path, p.cell or 0, p.line, str(p.repo)))
    return ScanReport(tuple(pins), tuple(skipped), scanned)
