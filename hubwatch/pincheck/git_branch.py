"""`hubwatch check --fix --branch NAME [--commit]`: the pin-bump branch, and its commit, in the scanned repo.

Git is run as a program (`git -C ROOT …`), never through a library: what a user's git does is what
happens. Before anything is written, the scanned folder must be in a work tree, the branch must not
exist, and (with `--commit`) no file to rewrite may hold changes of its own, which the commit would
otherwise carry. The commit holds the rewritten files only, with a message naming each pin moved and
the advisories moving it resolves (`commit_message`, a pure function of the moves).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Sequence

from hubwatch.pincheck.errors import GitBranchError
from hubwatch.pincheck.formats import Move, compare_link

__all__ = ["commit_files", "commit_message", "prepare_branch", "work_tree"]


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise GitBranchError("git is not installed (or not on PATH)", "install git, or drop --branch") from exc


def _checked(root: Path, *args: str) -> str:
    done = _git(root, *args)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise GitBranchError(f"`git {' '.join(args)}` failed in {root}: {said[-1] if said else done.returncode}",
                             "run that git command yourself to see why, fix it, and run check again")
    return done.stdout


def work_tree(path: Path) -> Path:
    """The root of the git work tree holding `path` (a folder, or a file's folder)."""
    folder = path if path.is_dir() else path.parent
    done = _git(folder, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise GitBranchError(f"{path} is not inside a git work tree, so --branch has nowhere to go",
                             "run check --fix --branch inside a clone of the repository (or drop --branch)")
    return Path(done.stdout.strip())


def prepare_branch(root: Path, name: str, files: Sequence[Path], commit: bool) -> None:
    """Switch the work tree at `root` to a new branch `name` from HEAD (the work tree kept as it is)."""
    if _git(root, "check-ref-format", "--branch", name).returncode != 0:
        raise GitBranchError(f"{name!r} is not a valid branch name", "pick a name such as hubwatch/pin-bump")
    if _git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}").returncode == 0:
        raise GitBranchError(f"branch {name} exists already in {root}",
                             "delete it (`git branch -D NAME`) or pick another --branch name")
    if commit:
        # `XY PATH` per changed file (the two status letters may be spaces: never strip the lines)
        dirty = [line[3:] for line in _checked(root, "status", "--porcelain", "--", *(str(f) for f in files))
                 .splitlines() if line.strip()]
        if dirty:
            raise GitBranchError(f"files to rewrite have uncommitted changes, which --commit would carry: "
                                 f"{', '.join(dirty)}",
                                 "commit or discard those changes first, or drop --commit")
    _checked(root, "switch", "--quiet", "-c", name)


def commit_files(root: Path, files: Sequence[Path], message: str) -> str:
    """Commit exactly `files` (already rewritten) on the current branch; the new commit's sha."""
    paths = [str(f) for f in files]
    _checked(root, "add", "--", *paths)
    _commit(root, paths, message)
    return _checked(root, "rev-parse", "HEAD").strip()


def _commit(root: Path, paths: list[str], message: str) -> None:
    done = subprocess.run(["git", "-C", str(root), "commit", "--quiet", "--no-verify", "-F", "-", "--", *paths],
                          input=message, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise GitBranchError(f"`git commit` failed in {root}: {said[-1] if said else done.returncode}",
                             "set user.name and user.email (`git config`), or commit the rewritten files yourself")


def commit_message(moves: Sequence[Move], web_url: str | None = None) -> str:
    """`hubwatch: move N model pins …`, then one paragraph per pin: where, from → to, what it resolves,
    the compare page when a web app is known."""
    repos = sorted({str(m.report.pin.repo) for m in moves})
    resolved = sorted({i for m in moves for i in m.resolves})
    noun = "pin" if len(moves) == 1 else "pins"
    title = f"hubwatch: move {len(moves)} model {noun} ({', '.join(repos)})"
    body = []
    for m in moves:
        pin = m.report.pin
        line = f"- {pin.where}: {pin.repo} {(pin.revision or '')[:12]} -> {m.new}"
        if m.resolves:
            line += f"\n  resolves {', '.join(m.resolves)}"
        elif m.report.on_main_line is False:
            line += "\n  the pinned commit was dropped from the main line upstream"
        if link := compare_link(web_url, m.report):
            line += f"\n  compare: {link}"
        body.append(line)
    summary = f"Resolves {', '.join(resolved)}." if resolved else "Moves pins off commits dropped upstream."
    return "\n\n".join([title, summary, "\n".join(body), "Made by `hubwatch check --fix --branch`."]) + "\n"
