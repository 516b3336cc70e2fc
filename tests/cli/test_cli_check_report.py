"""`hubwatch check` as people read it: advisory ids whole on an 80-column terminal, worst first."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from conftest import ADVISED_SHAS

from hubwatch.cli import _register, cli


def test_check_report_keeps_ids_whole_worst_first(advised_store_url: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(
        f'AutoModel.from_pretrained("acme/llama-small", revision="{ADVISED_SHAS["L2"]}")\n', encoding="utf-8"
    )
    _register()
    result = CliRunner().invoke(
        cli, ["check", str(project)], env={"HUBWATCH_DATABASE_URL": advised_store_url, "COLUMNS": "80"}
    )
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("train.py:1  acme/llama-small@89abcdef0123  affected")
    advisory_lines = [line.split() for line in lines[1:] if line.startswith("    ")
                      and not line.startswith(("    move to", "      ", "    FAILS:", "    passes the gate:"))]
    assert [words[0] for words in advisory_lines] == ["high", "medium"]  # worst first
    assert all(words[1].startswith("x_HUBWATCH-") for words in advisory_lines)  # whole ids, one a line
    assert "1 affected" in lines[-2] and lines[-1].startswith("1 failing the gate: train.py:1 ")
    # the pickle hazard came with L2: L1 carries none, so the pin is told to move back to it
    assert f"    move to {ADVISED_SHAS['L1']}" in result.output
