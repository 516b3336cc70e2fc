"""What `hubwatch check` tells per pin: whether it fails the gate and why (text and JSON), the report as
it stands after `--fix` wrote, and why a commit is unknown — the same from the local store and from a
server."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from check_servers import web_app  # noqa: F401
from click.testing import CliRunner, Result
from conftest import ADVISED_SHAS

from hubwatch.cli import _register, cli
from hubwatch.domain.records import RepoId
from hubwatch.storage import Store

L1, L2 = ADVISED_SHAS["L1"], ADVISED_SHAS["L2"]


def run(url: str, *args: str) -> Result:
    _register()
    return CliRunner().invoke(cli, ["check", *args], env={"HUBWATCH_DATABASE_URL": url, "COLUMNS": "200"})


def as_json(url: str, *args: str) -> tuple[int, dict[str, Any]]:
    result = run(url, *args, "--json")
    return result.exit_code, json.loads(result.output)


def project(tmp_path: Path, *lines: str) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir(parents=True)
    (folder / "app.py").write_text("\n".join(lines) + "\n")
    return folder


def blocks(output: str) -> dict[str, list[str]]:
    """The text report's block per pin, by `PATH:LINE`."""
    out: dict[str, list[str]] = {}
    for line in output.splitlines():
        if line.startswith("app.py:"):
            current = out.setdefault(line.split()[0], [])
        if line.startswith(("app.py:", "    ")) and out:
            current.append(line)
    return out


def hazard(body: dict[str, Any]) -> str:
    return next(a["id"] for p in body["pins"] for a in p["advisories"] if a["direction"] == "hazard")


def test_each_pin_says_whether_it_fails_the_gate_and_why(advised_store_url: str, tmp_path: Path) -> None:
    folder = project(
        tmp_path,
        f'AutoModel.from_pretrained("acme/llama-small", revision="{L2}")',  # high hazard + medium update
        f'AutoModel.from_pretrained("acme/llama-small", revision="{L1}")',  # the medium update only
        'AutoModel.from_pretrained("acme/never-seen", revision="abcdef1234")',
        'AutoModel.from_pretrained("acme/tiny")',
    )
    code, body = as_json(advised_store_url, str(folder))
    assert code == 1
    pickle = hazard(body)
    verdicts = [(p["fails_gate"], p["gate_reason"]) for p in body["pins"]]
    assert verdicts == [
        (True, f"high hazard {pickle} ≥ --fail-on high"),
        (False, "medium < high"),
        (False, "unknown pins fail only with --strict"),
        (False, "an unpinned use is a warning"),
    ]
    text = run(advised_store_url, str(folder))
    assert text.exit_code == 1
    pins = blocks(text.output)
    assert pins["app.py:1"][-1] == f"    FAILS: high hazard {pickle} ≥ --fail-on high"
    assert pins["app.py:2"][-1] == "    passes the gate: medium < high"  # affected, yet not failing
    assert pins["app.py:3"][-1] == "    passes the gate: unknown pins fail only with --strict"
    assert text.output.splitlines()[-1] == "1 failing the gate: app.py:1 acme/llama-small@89abcdef0123"

    # At --fail-on medium both affected pins fail, each for its own worst record.
    code, body = as_json(advised_store_url, str(folder), "--fail-on", "medium")
    assert code == 1 and [p["fails_gate"] for p in body["pins"]] == [True, True, False, False]
    assert body["pins"][0]["gate_reason"].endswith("(and 1 more) ≥ --fail-on medium")
    assert body["pins"][1]["gate_reason"].startswith("medium update x_HUBWATCH-")

    # --strict: the unknown pin fails too; an unpinned use stays a warning.
    code, body = as_json(advised_store_url, str(folder), "--strict")
    assert code == 1
    assert [(p["fails_gate"], p["gate_reason"]) for p in body["pins"][2:]] == [
        (True, "unknown pin, and --strict fails unknown pins"),
        (False, "an unpinned use is a warning, even with --strict"),
    ]
    # Acknowledged, the hazard no longer fails the pin, and the report says why.
    code, body = as_json(advised_store_url, str(folder), "--ignore", pickle)
    assert code == 0 and body["pins"][0]["fails_gate"] is False
    assert body["pins"][0]["gate_reason"] == "medium < high"
    text = run(advised_store_url, str(folder), "--ignore", pickle)
    assert text.exit_code == 0 and text.output.splitlines()[-1] == "no pin fails the gate"


def test_fix_reports_the_pins_as_they_stand_after_the_rewrite(advised_store_url: str, tmp_path: Path) -> None:
    folder = project(tmp_path, f'AutoModel.from_pretrained("acme/llama-small", revision="{L2}")')
    # At medium the move to L1 resolves the pickle hazard, but L1 still lacks the medium update.
    result = run(advised_store_url, str(folder), "--fix", "--fail-on", "medium")
    assert result.exit_code == 1, result.output
    before, _, after = result.output.partition("after --fix (the pins looked up again):\n")
    assert f"changed app.py:1: acme/llama-small@{L2} → {L1}" in before
    assert "FAILS: high hazard" in before
    assert after.splitlines()[0] == "app.py:1  acme/llama-small@0123456789ab  affected"
    assert "high" not in after.split("FAILS")[0]  # the hazard is gone after the rewrite
    assert blocks(after)["app.py:1"][-1].startswith("    FAILS: medium update x_HUBWATCH-")
    assert after.splitlines()[-1] == "1 failing the gate: app.py:1 acme/llama-small@0123456789ab"
    assert (folder / "app.py").read_text().count(L1) == 1

    # JSON: `pins` as scanned, `after_fix.pins` as they stand now; `failed` is theirs.
    folder.joinpath("app.py").write_text(f'AutoModel.from_pretrained("acme/llama-small", revision="{L2}")\n')
    code, body = as_json(advised_store_url, str(folder), "--fix")
    assert code == 0 and body["failed"] is False
    assert body["pins"][0]["commit"] == L2 and body["pins"][0]["fails_gate"] is True
    assert [(p["commit"], p["fails_gate"], p["gate_reason"]) for p in body["after_fix"]["pins"]] == [
        (L1, False, "medium < high")
    ]
    # Passing after the rewrite: the report says nothing fails.
    folder.joinpath("app.py").write_text(f'AutoModel.from_pretrained("acme/llama-small", revision="{L2}")\n')
    result = run(advised_store_url, str(folder), "--fix")
    assert result.exit_code == 0 and result.output.splitlines()[-1] == "no pin fails the gate"
    # A dry run writes nothing, and is reported as plain check would be (no second report).
    folder.joinpath("app.py").write_text(f'AutoModel.from_pretrained("acme/llama-small", revision="{L2}")\n')
    result = run(advised_store_url, str(folder), "--fix", "--dry-run")
    assert result.exit_code == 1 and "after --fix" not in result.output


UNKNOWN_SHA = "deadbeef" * 5


@pytest.fixture
def store_with_states(advised_store_url: str) -> str:
    """The advised store with acme/llama-small polled, acme/empty watched and never polled."""
    store = Store.open(advised_store_url)
    try:
        store.repos.record_poll(RepoId("acme", "llama-small"), "ok", None, datetime(2024, 6, 4, 12, tzinfo=timezone.utc))
        store.watch(RepoId("acme", "empty"))
    finally:
        store.close()
    return advised_store_url


UNKNOWN_PINS = (
    f'AutoModel.from_pretrained("acme/llama-small", revision="{UNKNOWN_SHA}")',
    'AutoModel.from_pretrained("acme/unwatched", revision="abcdef1234")',
    'AutoModel.from_pretrained("acme/empty", revision="abcdef1234")',
)
NOTES = [
    "unknown: not in the stored history of acme/llama-small (3 revisions, last polled 2024-06-04T12:00:00Z): "
    "mistyped, from another repo, or a commit upstream never had on main or pushed after the last poll; "
    "check the sha, or run `hubwatch poll acme/llama-small`",
    "unknown: acme/unwatched is not watched (watch the repo, then poll: `hubwatch watch add acme/unwatched`, "
    "then `hubwatch poll acme/unwatched`)",
    "unknown: acme/empty is watched but no revision is stored yet (run `hubwatch poll acme/empty`)",
]


def test_an_unknown_commit_says_why_from_the_local_store(store_with_states: str, tmp_path: Path) -> None:
    folder = project(tmp_path, *UNKNOWN_PINS)
    code, body = as_json(store_with_states, str(folder))
    assert code == 0
    assert [p["status"] for p in body["pins"]] == ["unknown"] * 3
    assert [p["note"] for p in body["pins"]] == NOTES
    assert [p["on_main_line"] for p in body["pins"]] == [None] * 3  # a commit the store never saw is on no line
    text = run(store_with_states, str(folder)).output
    assert "watch the repo, then poll" not in "".join(blocks(text)["app.py:1"])  # it is watched and polled
    assert f"    {NOTES[0]}" in text.splitlines()


def test_an_unknown_commit_says_the_same_from_a_server(store_with_states: str, web_app: str,  # noqa: F811
                                                       tmp_path: Path) -> None:
    folder = project(tmp_path, *UNKNOWN_PINS)
    empty = f"sqlite:///{tmp_path / 'empty.db'}"  # answers come from the server
    code, body = as_json(empty, str(folder), "--server", web_app)
    assert code == 0
    assert [p["note"] for p in body["pins"]] == NOTES
    assert [p["on_main_line"] for p in body["pins"]] == [None] * 3
    code, local = as_json(store_with_states, str(folder))
    assert [(p["note"], p["fails_gate"], p["gate_reason"]) for p in body["pins"]] == [
        (p["note"], p["fails_gate"], p["gate_reason"]) for p in local["pins"]
    ]
    # Known pins read the same on both paths too, verdicts included.
    known = project(tmp_path / "k", f'AutoModel.from_pretrained("acme/llama-small", revision="{L2}")',
                    f'AutoModel.from_pretrained("acme/llama-small", revision="{L1}")')
    _, served = as_json(empty, str(known), "--server", web_app)
    _, local = as_json(store_with_states, str(known))
    fields = ("status", "fails_gate", "gate_reason", "on_main_line", "note")
    assert [[p[f] for f in fields] for p in served["pins"]] == [[p[f] for f in fields] for p in local["pins"]]
    assert served["pins"][0]["fails_gate"] is True and served["pins"][0]["on_main_line"] is True
