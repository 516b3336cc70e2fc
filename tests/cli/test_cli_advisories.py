"""`hubwatch advisories`, `hubwatch export osv` and `hubwatch check` end to end (real SQLite, real HTTP)."""

from __future__ import annotations

import json
import socket
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import ADVISED_SHAS

from hubwatch.cli import _register, cli
from hubwatch.cli.errors import run_cli
from hubwatch.advisories.osv import validate_osv


def invoke(url: str, *args: str) -> Result:
    _register()
    return CliRunner().invoke(cli, list(args), env={"HUBWATCH_DATABASE_URL": url}, catch_exceptions=False)


def project(tmp_path: Path, *lines: str) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "app.py").write_text("\n".join(lines) + "\n")
    return folder


def test_advisories_json_lists_valid_osv_records(advised_store_url: str) -> None:
    result = invoke(advised_store_url, "advisories", "--json")
    assert result.exit_code == 0, result.output
    records = json.loads(result.output)
    assert len(records) == 3
    for record in records:
        validate_osv(record)
    only = json.loads(invoke(advised_store_url, "advisories", "--repo", "acme/tiny", "--json").output)
    assert [r["database_specific"]["repo"] for r in only] == ["acme/tiny"]


def test_advisories_limit_keeps_the_most_recently_published(advised_store_url: str) -> None:
    every = [r["id"] for r in json.loads(invoke(advised_store_url, "advisories", "--json").output)]
    for n in (1, 2, 3, 10):
        newest = json.loads(invoke(advised_store_url, "advisories", "--json", "--limit", str(n)).output)
        assert [r["id"] for r in newest] == every[-n:]  # still oldest first
    table = invoke(advised_store_url, "advisories", "-n", "1")
    assert table.exit_code == 0 and every[-1] in table.output and every[0] not in table.output
    assert invoke(advised_store_url, "advisories", "--limit", "0").exit_code == 2


def test_advisories_table_and_bad_repo(advised_store_url: str) -> None:
    result = invoke(advised_store_url, "advisories")
    assert result.exit_code == 0 and "x_HUBWATCH-2024-" in result.output and "pickle" in result.output
    bad = invoke(advised_store_url, "advisories", "--repo", "not a repo")
    assert bad.exit_code == 2 and "org/name" in bad.output


def test_export_osv_writes_the_dump_layout(advised_store_url: str, tmp_path: Path) -> None:
    out = tmp_path / "osv"
    result = invoke(advised_store_url, "export", "osv", str(out))
    assert result.exit_code == 0, result.output
    lines = (out / "modified_id.csv").read_text().splitlines()
    assert len(lines) == 3 and all(",GIT/x_HUBWATCH-" in line for line in lines)
    assert lines == sorted(lines, reverse=True)
    with zipfile.ZipFile(out / "GIT" / "all.zip") as archive:
        assert sorted(archive.namelist()) == sorted(p.name for p in (out / "GIT").glob("*.json"))
    assert (out / "all.zip").is_file()


def test_check_exit_codes_follow_fail_on(advised_store_url: str, tmp_path: Path) -> None:
    l1, l2 = ADVISED_SHAS["L1"], ADVISED_SHAS["L2"]
    medium_only = project(tmp_path, f'AutoModel.from_pretrained("acme/llama-small", revision="{l1}")')
    assert invoke(advised_store_url, "check", str(medium_only)).exit_code == 0  # default: high
    assert invoke(advised_store_url, "check", str(medium_only), "--fail-on", "medium").exit_code == 1
    (medium_only / "more.py").write_text(f'snapshot_download("acme/llama-small", revision="{l2[:10]}")\n')
    assert invoke(advised_store_url, "check", str(medium_only)).exit_code == 1  # the pickle is high
    assert invoke(advised_store_url, "check", str(medium_only), "--fail-on", "critical").exit_code == 0
    # the same through the entry point's error handling
    import os

    os.environ["HUBWATCH_DATABASE_URL"] = advised_store_url
    try:
        assert run_cli(cli, ["check", str(medium_only)]) == 1
    finally:
        del os.environ["HUBWATCH_DATABASE_URL"]


def test_unknown_and_unpinned_never_fail_or_pass_as_safe(advised_store_url: str, tmp_path: Path) -> None:
    folder = project(
        tmp_path,
        'AutoModel.from_pretrained("acme/never-seen", revision="abcdef1234")',
        'AutoModel.from_pretrained("acme/llama-small")',
    )
    result = invoke(advised_store_url, "check", str(folder), "--json", "--fail-on", "info")
    assert result.exit_code == 0
    body = json.loads(result.output)
    assert [(p["repo"], p["status"]) for p in body["pins"]] == [
        ("acme/never-seen", "unknown"), ("acme/llama-small", "unpinned")
    ]
    assert body["failed"] is False and body["fail_on"] == "info"
    table = invoke(advised_store_url, "check", str(folder))
    assert "unknown" in table.output and "unpinned" in table.output and "0 clean" in table.output


def test_check_json_on_the_fixture_code_base(advised_store_url: str, data_dir: Path) -> None:
    result = invoke(advised_store_url, "check", str(data_dir / "checkproj"), "--json")
    assert result.exit_code == 1
    body = json.loads(result.output)
    affected = {(p["path"], p["line"]) for p in body["pins"] if p["status"] == "affected"}
    assert affected == {("src/train.py", 9), ("src/train.py", 10)}
    assert body["skipped"] == [{"path": "src/broken.py", "why": "not parseable as Python (line 1)"}]


@pytest.fixture
def server_url(advised_store_url: str) -> Iterator[str]:
    """The real web app over the advised store, served by uvicorn on a free loopback port."""
    import uvicorn

    from hubwatch.feeds import create_app
    from hubwatch.settings import Settings
    from hubwatch.storage import Store

    store = Store.open(advised_store_url)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(Settings(), store), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        store.close()


def test_check_against_a_server(server_url: str, tmp_path: Path) -> None:
    empty_db = f"sqlite:///{tmp_path / 'empty.db'}"  # the local store knows nothing: answers come from the server
    folder = project(
        tmp_path,
        f'AutoModel.from_pretrained("acme/llama-small", revision="{ADVISED_SHAS["L2"]}")',
        'AutoModel.from_pretrained("acme/tiny", revision="fedcba9")',
        'AutoModel.from_pretrained("acme/never-seen", revision="abcdef1234")',
    )
    result = invoke(empty_db, "check", str(folder), "--json", "--server", server_url)
    assert result.exit_code == 1, result.output
    pins = json.loads(result.output)["pins"]
    assert [p["status"] for p in pins] == ["affected", "clean", "unknown"]
    assert {a["severity"] for a in pins[0]["advisories"]} == {"high", "medium"}


def test_check_without_a_server_or_with_a_bad_url(tmp_path: Path) -> None:
    # An unreachable --server exits 3 (the server did not answer): tests/cli/test_cli_exit_codes.py.
    folder = project(tmp_path, 'AutoModel.from_pretrained("acme/x", revision="abcdef1234")')
    local = invoke(f"sqlite:///{tmp_path / 'e.db'}", "check", str(folder))
    assert local.exit_code == 0 and "watches no repos" in local.output
    assert invoke("sqlite://", "check", str(folder), "--server", "ftp://x").exit_code == 2
