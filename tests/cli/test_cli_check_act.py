"""`hubwatch check` as CI uses it: acknowledgements, the suggested revision, --fix on every pin style, exit codes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import ADVISED_SHAS

from hubwatch.cli import _register, cli
from hubwatch.domain.clock import fixed_clock

L1, L2 = ADVISED_SHAS["L1"], ADVISED_SHAS["L2"]
NOW = datetime(2025, 3, 1, 12, tzinfo=timezone.utc)

# One file per pin style, each pinning acme/llama-small at L2 (which carries the pickle hazard).
NOTEBOOK = {
    "cells": [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["import transformers  # é\n", f'm = AutoModel.from_pretrained("acme/llama-small", revision="{L2}")\n']},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": [f"!hf download acme/llama-small --revision {L2}\n"]},
    ],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}
STYLES = {
    "train.py": (f'REV = "{L2}"\nmodel = AutoModel.from_pretrained(\n    "acme/llama-small",  # the base\n'
                 f'    revision=REV,\n)\nw = "hf://acme/llama-small@{L2}/model.safetensors"\n'),
    "serve.yaml": f"server:\n  model: acme/llama-small   # keep\n  revision: '{L2}'\nurl: hf://acme/llama-small@{L2}\n",
    "eval.toml": f'[model]\nmodel_id = "acme/llama-small"\nrevision = "{L2}"  # pinned\n',
    "train.json": '{\n\t"model_name_or_path": "acme/llama-small",\n\t"model_revision": "' + L2 + '"\n}\n',
    "Dockerfile": (f"FROM python:3.12-slim\nRUN pip install huggingface_hub && \\\n"
                   f"    hf download acme/llama-small \\\n      --revision {L2} --local-dir /m\n"),
    "fetch.sh": f'#!/bin/sh\nhuggingface-cli download "acme/llama-small" --revision="{L2}"\n',
    "explore.ipynb": json.dumps(NOTEBOOK, indent=1, ensure_ascii=False) + "\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for name, text in STYLES.items():
        (root / name).write_bytes(text.replace("\n", "\r\n" if name == "eval.toml" else "\n").encode("utf-8"))
    (root / "fetch.sh").chmod(0o750)
    return root


def run(url: str, *args: str, clock: datetime = NOW) -> Result:
    _register()
    return CliRunner().invoke(cli, ["check", *args], obj={"clock": fixed_clock(clock)},
                              env={"HUBWATCH_DATABASE_URL": url, "COLUMNS": "200"})


def report(url: str, *args: str, clock: datetime = NOW) -> tuple[int, dict[str, Any]]:
    result = run(url, *args, "--json", clock=clock)
    return result.exit_code, json.loads(result.output)


def hazard_id(url: str, root: Path) -> str:
    _, body = report(url, str(root))
    return next(a["id"] for p in body["pins"] for a in p["advisories"] if a["direction"] == "hazard")


def test_every_style_is_affected_with_a_suggestion_in_json(advised_store_url: str, project: Path) -> None:
    code, body = report(advised_store_url, str(project))
    assert code == 1 and body["failed"] is True and body["strict"] is False
    assert len(body["pins"]) == 10
    for pin in body["pins"]:
        assert pin["status"] == "affected" and pin["commit"] == L2, pin
        assert {a["direction"] for a in pin["advisories"]} == {"hazard", "update"}
        assert all(set(a) >= {"id", "severity", "kinds", "summary", "direction", "ignored"} for a in pin["advisories"])
        assert not any(a["ignored"] for a in pin["advisories"])
        hazard = next(a for a in pin["advisories"] if a["direction"] == "hazard")
        assert pin["suggested"] == {"commit": L1, "resolves": [hazard["id"]], "changes": []}
    assert body["acknowledgements"] == {"active": [], "expired": []}


def test_fix_rewrites_every_style_and_the_second_check_passes(advised_store_url: str, project: Path) -> None:
    result = run(advised_store_url, str(project), "--fix")
    assert result.exit_code == 0, result.output  # after the rewrite only the medium update is left
    assert result.output.count("changed ") == 10 and "left alone" not in result.output
    for name, text in STYLES.items():
        raw = (project / name).read_bytes()
        expected = text.replace(L2, L1).replace("\n", "\r\n" if name == "eval.toml" else "\n")
        assert raw == expected.encode("utf-8"), name  # only the revision changed, byte for byte
    assert stat.S_IMODE((project / "fetch.sh").stat().st_mode) == 0o750
    assert not [p for p in project.iterdir() if p.name.endswith(".hubwatch-fix")]
    code, body = report(advised_store_url, str(project))
    assert code == 0 and {p["commit"] for p in body["pins"]} == {L1}
    assert all(p["suggested"] is None for p in body["pins"])
    again = run(advised_store_url, str(project), "--fix")
    assert again.exit_code == 0 and "nothing to fix" in again.output


def test_dry_run_prints_the_diff_and_writes_nothing(advised_store_url: str, project: Path) -> None:
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in project.iterdir()}
    result = run(advised_store_url, str(project), "--fix", "--dry-run")
    assert result.exit_code == 1  # nothing was written: the pins still fail
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in project.iterdir()} == before
    assert "--- a/serve.yaml\n+++ b/serve.yaml\n" in result.output
    assert f"\n-  revision: '{L2}'\n" in result.output and f"\n+  revision: '{L1}'\n" in result.output
    assert "would change" in result.output
    code, body = report(advised_store_url, str(project), "--fix", "--dry-run")
    assert code == 1 and len(body["fixed"]) == 10 and not any(f["written"] for f in body["fixed"])
    assert body["diff"].startswith("--- a/Dockerfile\n")


def test_fix_leaves_computed_and_shared_revisions_alone(advised_store_url: str, tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    text = (f'R = "{L2}"\nAutoModel.from_pretrained("acme/llama-small", revision=R)\n'
            'AutoModel.from_pretrained("acme/tiny", revision=R)\n'
            'AutoModel.from_pretrained("acme/llama-small", revision=os.environ["REV"])\n')
    (root / "a.py").write_text(text, encoding="utf-8")
    result = run(advised_store_url, str(root), "--fix")
    assert "another pin reads the same revision text" in result.output
    assert (root / "a.py").read_text(encoding="utf-8") == text


def test_an_acknowledged_hazard_is_listed_and_does_not_fail(advised_store_url: str, project: Path) -> None:
    ident = hazard_id(advised_store_url, project)
    (project / ".hubwatch.toml").write_text(
        f'[[ignore]]\nid = "{ident}"\nreason = "we never load the .bin"\nuntil = 2025-04-01\n', encoding="utf-8")
    code, body = report(advised_store_url, str(project))
    assert code == 0 and body["failed"] is False
    hits = [a for p in body["pins"] for a in p["advisories"] if a["id"] == ident]
    assert len(hits) == 10 and all(a["ignored"] for a in hits)
    assert body["acknowledgements"]["active"][0] == {
        "id": ident, "reason": "we never load the .bin", "until": "2025-04-01", "source": ".hubwatch.toml"}
    # acknowledged, the pickle no longer blocks the newest revision: move forward, to L3
    assert {p["suggested"]["commit"] for p in body["pins"]} == {ADVISED_SHAS["L3"]}
    table = run(advised_store_url, str(project))
    assert table.exit_code == 0 and "(ignored: we never load the .bin)" in table.output


def test_an_expired_entry_stops_applying_and_says_so(advised_store_url: str, project: Path) -> None:
    ident = hazard_id(advised_store_url, project)
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "x"\n\n[[tool.hubwatch.ignore]]\nid = "{ident}"\nreason = "r"\nuntil = "2025-03-01"\n',
        encoding="utf-8")
    code, body = report(advised_store_url, str(project))  # the clock reads 2025-03-01: expired today
    assert code == 1 and body["acknowledgements"]["expired"][0]["id"] == ident
    assert not any(a["ignored"] for p in body["pins"] for a in p["advisories"])
    result = run(advised_store_url, str(project))
    assert f"the ignore entry for {ident} expired on 2025-03-01" in result.output
    code, _ = report(advised_store_url, str(project), clock=datetime(2025, 2, 28, 23, tzinfo=timezone.utc))
    assert code == 0  # the day before, it still applied


def test_ignore_on_the_command_line(advised_store_url: str, project: Path) -> None:
    ident = hazard_id(advised_store_url, project)
    code, body = report(advised_store_url, str(project), "--ignore", ident, "--ignore", "x_OTHER-1")
    assert code == 0 and all(a["ignored"] for p in body["pins"] for a in p["advisories"] if a["id"] == ident)
    code, _ = report(advised_store_url, str(project), "--ignore", ident, "--fail-on", "medium")
    assert code == 1  # the medium update is not acknowledged


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('[[ignore]]\nid = "X-1"\n', ".hubwatch.toml: ignore entry 1 (X-1) has no reason"),
        ('[[ignore]]\nreason = "r"\n', ".hubwatch.toml: ignore entry 1 has no id"),
        ('[[ignore]]\nid = "X-1"\nreason = "r"\nuntil = "soon"\n', "ignore entry 1 (X-1) has until = 'soon', not a date"),
        ('[[ignore]]\nid = "X-1"\nreason = "r"\nuntill = 2025-01-01\n', "ignore entry 1 has unknown key 'untill'"),
        ('ignore = "X-1"\n', ".hubwatch.toml: ignore is not a list of tables"),
        ("[[ignore]\n", ".hubwatch.toml is not valid TOML"),
    ],
)
def test_a_bad_acknowledgement_file_exits_2_with_the_fix(advised_store_url: str, tmp_path: Path, config: str,
                                                         message: str) -> None:
    (tmp_path / ".hubwatch.toml").write_text(config, encoding="utf-8")
    env = {**os.environ, "HUBWATCH_DATABASE_URL": advised_store_url, "COLUMNS": "300"}
    done = subprocess.run([sys.executable, "-m", "hubwatch", "check", str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: ") and message in lines[0] and lines[1].startswith("fix: ")


def test_unknown_pins_fail_only_with_strict(advised_store_url: str, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(f'snapshot_download("acme/tiny", revision="{"9" * 40}")\n', encoding="utf-8")
    code, body = report(advised_store_url, str(tmp_path))
    assert code == 0 and body["pins"][0]["status"] == "unknown"
    code, body = report(advised_store_url, str(tmp_path), "--strict")
    assert code == 1 and body["strict"] is True and body["failed"] is True


def test_dry_run_needs_fix(advised_store_url: str, tmp_path: Path) -> None:
    assert run(advised_store_url, str(tmp_path), "--dry-run").exit_code == 2
