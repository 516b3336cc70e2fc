"""Errors map to the documented exit codes by meaning, the most specific class first.

Through the real entry point (`python -m hubwatch`): an ambiguous sha prefix is bad input (2),
an unreachable `check --server` is a server that did not answer (3), an unopenable database 4.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from hubwatch.cli.errors import EXIT_HUB, EXIT_STORE, EXIT_USAGE, exit_code_for, meanings
from hubwatch.pincheck.errors import ServerError, ServerUnreachable
from hubwatch.storage.errors import AmbiguousRevision, DatabaseUnavailable, MigrationFailed, StorageError
from hubwatch.tracker.errors import HubUnavailable

REPO = "acme/prefixed"
# v2 and v3 share their first 8 hex digits: `abcdef12` names neither alone.
COMMITS = ["1" * 40, "abcdef12" + "3" * 32, "abcdef12" + "4" * 32]


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hubwatch", *args], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120)


def prefixed_history(data_dir: Path, root: Path) -> Path:
    folder = root / REPO.replace("/", "__")
    shutil.copytree(data_dir / "histories" / "Qwen__Qwen-7B", folder)
    tsv = folder / "HISTORY.tsv"
    rows = list(csv.DictReader(tsv.read_text(encoding="utf-8").splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))
    for row, commit in zip(rows, COMMITS, strict=True):
        row["commit"] = commit
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    tsv.write_text(out.getvalue(), encoding="utf-8")
    return root


def test_the_table_has_no_shadowed_entry() -> None:
    for i, (later, _) in enumerate(meanings()):
        for earlier, _ in meanings()[:i]:
            assert not issubclass(later, earlier), f"{later.__name__} is listed after its base {earlier.__name__}"


def test_meanings_of_the_boundary_errors() -> None:
    assert exit_code_for(AmbiguousRevision("prefix")) == EXIT_USAGE  # before its base StorageError
    assert exit_code_for(DatabaseUnavailable("x")) == EXIT_STORE
    assert exit_code_for(MigrationFailed("x")) == EXIT_STORE
    assert exit_code_for(StorageError("x")) == EXIT_STORE
    assert exit_code_for(ServerUnreachable("x")) == EXIT_HUB
    assert exit_code_for(ServerError("x")) == EXIT_HUB
    assert exit_code_for(HubUnavailable("x")) == EXIT_HUB
    assert exit_code_for(RuntimeError("a bug")) is None  # unknown: the traceback is shown


def test_an_ambiguous_sha_prefix_is_bad_input(tmp_path: Path, data_dir: Path, hubsim_factory: Any) -> None:
    sim = hubsim_factory(root=prefixed_history(data_dir, tmp_path / "root"), at=None)
    env = {"HUBWATCH_DATABASE_URL": f"sqlite:///{tmp_path / 'hw.db'}", "HUBWATCH_HUB_ENDPOINT": sim.url, "HF_TOKEN": ""}
    assert run(env, "watch", "add", REPO).returncode == 0
    assert run(env, "poll").returncode == 0
    result = run(env, "diff", REPO, COMMITS[0], "abcdef12")
    assert result.returncode == EXIT_USAGE, result.stderr
    assert "matches several revisions" in result.stderr and "fix: give more characters" in result.stderr
    assert "Traceback" not in result.stderr
    assert run(env, "diff", REPO, COMMITS[0], "abcdef123").returncode == 0  # one more digit names v2


def test_an_unreachable_check_server_is_a_server_that_did_not_answer(tmp_path: Path) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "app.py").write_text('AutoModel.from_pretrained("acme/x", revision="abcdef1234")\n')
    env = {"HUBWATCH_DATABASE_URL": f"sqlite:///{tmp_path / 'e.db'}"}
    result = run(env, "check", str(folder), "--server", f"http://127.0.0.1:{port}")
    assert result.returncode == EXIT_HUB, result.stderr
    assert f"cannot reach the hubwatch server at http://127.0.0.1:{port}" in result.stderr
    assert "fix: start `hubwatch serve` there" in result.stderr and "Traceback" not in result.stderr


def test_a_database_that_cannot_be_opened(tmp_path: Path) -> None:
    result = run({"HUBWATCH_DATABASE_URL": f"sqlite:///{tmp_path / 'missing' / 'dir' / 'hw.db'}"}, "watch", "list")
    assert result.returncode == EXIT_STORE, result.stderr
    assert "fix:" in result.stderr and "Traceback" not in result.stderr
