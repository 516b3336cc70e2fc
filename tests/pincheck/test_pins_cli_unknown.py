"""`hubwatch check` on a folder: a revision computed at run time is listed as unknown, with its line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from hubwatch.cli import _register, cli


def test_a_run_time_revision_is_listed_unknown_with_its_line(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "fetch.sh").write_text('#!/bin/sh\nREV="$1"\nhf download acme/llama-small --revision "$REV"\n',
                                      encoding="utf-8")
    (project / "Dockerfile").write_text("FROM python:3.12\nARG MODEL_REVISION=v1.0\n"
                                        "RUN hf download acme/tiny --revision ${MODEL_REVISION}\n", encoding="utf-8")
    env = {"HUBWATCH_DATABASE_URL": f"sqlite:///{tmp_path / 'hw.db'}", "COLUMNS": "200"}
    _register()
    result = CliRunner().invoke(cli, ["check", str(project)], env=env)
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("fetch.sh:"))
    assert line.startswith("fetch.sh:3  acme/llama-small") and "unknown" in line, result.output
    assert "computed at run time" in result.output
    assert "branch" not in line
    docker = next(x for x in result.output.splitlines() if x.startswith("Dockerfile:"))
    assert docker.startswith("Dockerfile:3  acme/tiny") and "unpinned" in docker  # a tag literal still moves

    out = CliRunner().invoke(cli, ["check", str(project), "--json"], env=env).output
    body = json.loads(out[out.index("{"):])  # after the store's warning line
    [pin] = [p for p in body["pins"] if p["path"] == "fetch.sh"]
    assert (pin["line"], pin["status"], pin["revision"]) == (3, "unknown", None)
    assert "computed at run time" in pin["note"]
    assert CliRunner().invoke(cli, ["check", str(project), "--strict"], env=env).exit_code == 1
