"""Make tests/data/old_store/d45be41.db: a store written by hubwatch as of commit d45be41 (the
release before issue 9's advisory model), by polling four real histories through that release's
own hub emulator. Run from the repository root:

    git worktree add /tmp/old d45be41
    .venv/bin/python tests/data/old_store/make_old_store.py /tmp/old

The old code is put first on PYTHONPATH (ahead of the editable install of this checkout).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
REPOS = {
    "meta-llama/Llama-2-7b-hf": ROOT / "hubwatch" / "hubsim" / "demo" / "meta-llama__Llama-2-7b-hf",
    "tiiuae/falcon-7b-instruct": ROOT / "tests" / "data" / "histories" / "tiiuae__falcon-7b-instruct",
    "deepseek-ai/DeepSeek-R1": ROOT / "tests" / "data" / "histories" / "deepseek-ai__DeepSeek-R1",
    "Qwen/Qwen-7B-Chat": ROOT / "tests" / "data" / "histories" / "Qwen__Qwen-7B-Chat",
}


def main(old: Path) -> None:
    target = HERE / "d45be41.db"
    target.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        for folder in REPOS.values():
            shutil.copytree(folder, root / folder.name)
        env = {**os.environ, "PYTHONPATH": str(old), "HUBWATCH_DATABASE_URL": f"sqlite:///{target}"}
        sim = subprocess.Popen([sys.executable, "-m", "hubwatch", "hubsim", "--root", str(root)], env=env,
                               stdout=subprocess.PIPE, text=True, cwd=tmp)  # fmt: skip
        try:
            assert sim.stdout is not None
            url = sim.stdout.readline().split()[-1]
            env["HUBWATCH_HUB_ENDPOINT"] = url
            for repo in REPOS:
                subprocess.run([sys.executable, "-m", "hubwatch", "watch", "add", repo], env=env, check=True, cwd=tmp)
            subprocess.run([sys.executable, "-m", "hubwatch", "poll"], env=env, check=True, cwd=tmp)
        finally:
            sim.terminate()
            sim.wait()
    for suffix in ("-wal", "-shm"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    print(f"wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
