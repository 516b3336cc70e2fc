"""Build hook: refuse a checkout whose design-folder links are plain files, and ship the links in the sdist.

The four design folders are linked into the package (hubwatch/tracker -> ../tracker, ...). A checkout
made with git's core.symlinks=false turns each link into a small text file; setuptools would then
build a package without them and call it a success. This stops the build with the cause and the fix.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent
LINKED = ("estimator", "feeds", "storage", "tracker")  # hubwatch/<name> -> ../<name>
FIX = "fix: git config core.symlinks true, then check the links out again (git checkout -- " + " ".join(
    f"hubwatch/{name}" for name in LINKED
) + ") or clone afresh"


def broken_link(root: Path) -> str | None:
    """One line naming the first design-folder link that is not a package, or None when all are."""
    for name in LINKED:
        link = root / "hubwatch" / name
        if (link / "__init__.py").is_file():
            continue
        if link.is_file() and not link.is_symlink():
            cause = f"hubwatch/{name} is a plain file, not a link to ../{name} (a checkout with core.symlinks=false)"
        else:
            cause = f"hubwatch/{name} does not lead to the package folder {name}/"
        return f"hubwatch: cannot build: {cause}; {FIX}"
    return None


class SdistWithLinks(sdist):
    """The sdist keeps the checkout's layout: the design folders once, linked from hubwatch/."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        linked = tuple(os.path.join("hubwatch", name) + os.sep for name in LINKED)
        super().make_release_tree(base_dir, [f for f in files if not os.path.normpath(f).startswith(linked)])
        for name in LINKED:
            target = Path(base_dir, "hubwatch", name)
            if not target.is_symlink():
                os.symlink(os.path.join("..", name), target)


problem = broken_link(ROOT)
if problem is not None:
    sys.exit(problem)

setup(cmdclass={"sdist": SdistWithLinks})
