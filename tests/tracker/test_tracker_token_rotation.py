"""A token rotated while the daemon runs (issue 10): `hubwatch run --no-web` reads its token the way
huggingface_hub does (HF_TOKEN, else the token file `hf auth login` writes, HF_TOKEN_PATH); the hub
rejects it (401), the worker records the problem and stops calling the hub, and once a good token
is written to the file it resumes within a cycle, without a restart, and clears the problem."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from hubwatch.domain.records import RepoId
from hubwatch.hubsim import demo_root
from hubwatch.hubsim.modes import requests_seen
from hubwatch.storage import Store
from hubwatch.tracker.hubstate import token_problem
from tests.tracker.workers import FAST_ENV, complete, start_worker, wait_for

LLAMA = RepoId.parse("meta-llama/Llama-2-7b-hf")
TINY = RepoId.parse("hubsim-test/tiny-llama")
INTERVAL_S = float(FAST_ENV["HUBWATCH_POLL_INTERVAL_S"])


def test_a_token_rotated_in_the_token_file_is_used_without_a_restart(
    hubsim_factory: Any, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUBWATCH_HF_TOKEN", "HF_HUB_DISABLE_IMPLICIT_TOKEN"):
        monkeypatch.delenv(name, raising=False)  # the worker's token comes from the file alone
    root = tmp_path / "root"
    root.mkdir()
    for source in (demo_root() / "meta-llama__Llama-2-7b-hf", data_dir / "hubsim" / "hubsim-test__tiny-llama"):
        (root / source.name).symlink_to(source.resolve(), target_is_directory=True)
    sim = hubsim_factory(root=root, at="v1", faults={"invalid_token": "hf_revoked"})
    token_file = tmp_path / "hf-home" / "token"
    token_file.parent.mkdir()
    token_file.write_text("hf_revoked\n")
    db = f"sqlite:///{tmp_path / 'rotate.db'}"
    store = Store.open(db)
    for repo in (LLAMA, TINY):
        store.watch(repo)
    proc = start_worker(sim, db, "r", HF_TOKEN_PATH=str(token_file))
    try:
        assert wait_for(lambda: token_problem(store) is not None, 30) is not None, "the 401 was not recorded"
        sent = requests_seen(sim.state)
        assert sent <= 3, sent  # the listing and the first repo's head request, then nothing more
        assert all(s.head_sha is None and s.failures == 0 for s in store.repos.watched())  # not the repos' fault
        token_file.write_text("hf_rotated\n")  # `hf auth login` with a new token
        took = wait_for(lambda: complete(store, sim), 2 * INTERVAL_S + 10)
        assert took is not None, "the worker did not resume with the rotated token within two cycles"
        assert token_problem(store) is None
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        store.close()
