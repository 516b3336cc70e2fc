"""`hubwatch check --format github|junit|markdown|json`, `--output FILE` and `--json` as `--format json`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import junitparser

sys.path.insert(0, str(Path(__file__).parents[1] / "pincheck"))
from check_formats_helpers import L1, L2, UNKNOWN, make_project, run_check  # noqa: E402


def test_github_annotates_each_pin_on_its_revision_and_writes_the_summary(advised_store_url: str,
                                                                          tmp_path: Path) -> None:
    make_project(tmp_path / "proj")
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    result = run_check(advised_store_url, "proj", "--format", "github", cwd=tmp_path,
                       GITHUB_STEP_SUMMARY=str(summary))
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    warnings = [line for line in lines if line.startswith("::warning ")]
    assert len(errors) == 1 and len(warnings) == 3  # L1 below the gate, the unknown and the unpinned pin
    props = dict(p.split("=", 1) for p in errors[0][len("::error "):].split("::")[0].split(","))
    source = (tmp_path / "proj" / "app.py").read_text().splitlines()
    line, col, end = int(props["line"]), int(props["col"]), int(props["endColumn"])
    assert props["file"] == "proj/app.py" and source[line - 1][col - 1:end - 1] == L2
    assert props["title"] == "hubwatch%3A acme/llama-small@89abcdef0123 affected"
    assert lines[-1] == "hubwatch: 1 of 5 pins fail the gate (--fail-on high)"
    text = summary.read_text()
    assert text.startswith("earlier step\n## hubwatch: ❌ 1 pin fails the gate")  # appended, not replaced


def test_github_without_a_summary_file_writes_none(advised_store_url: str, tmp_path: Path) -> None:
    make_project(tmp_path / "proj")
    result = run_check(advised_store_url, "proj", "--format", "github", "--fail-on", "medium", cwd=tmp_path)
    assert result.exit_code == 1 and sum(line.startswith("::error ") for line in result.output.splitlines()) == 2
    assert {p.name for p in tmp_path.iterdir()} - {"hubwatch.db"} == {"proj"}  # no summary written anywhere


def test_junit_one_case_per_pin_a_failure_per_failing_pin(advised_store_url: str, tmp_path: Path) -> None:
    make_project(tmp_path / "proj")
    report = tmp_path / "hubwatch.xml"
    result = run_check(advised_store_url, "proj", "--format", "junit", "--output", str(report), "--strict",
                       cwd=tmp_path)
    assert result.exit_code == 1 and result.output == ""
    xml = junitparser.JUnitXml.fromfile(str(report))
    (suite,) = list(xml)
    cases = list(suite)
    assert len(cases) == 5 and suite.tests == 5 and suite.failures == 2  # L2, and the unknown pin (--strict)
    failed = {c.name: c.result[0] for c in cases if c.result and isinstance(c.result[0], junitparser.Failure)}
    assert set(failed) == {"acme/llama-small@89abcdef0123 (line 2)", f"acme/tiny@{UNKNOWN[:12]} (line 5)"}
    assert failed["acme/llama-small@89abcdef0123 (line 2)"].message.startswith("high hazard x_HUBWATCH-")
    assert all(c.classname == "proj/app.py" for c in cases)


def test_markdown_is_the_pull_request_comment(advised_store_url: str, tmp_path: Path) -> None:
    make_project(tmp_path / "proj")
    result = run_check(advised_store_url, "proj", "--format", "markdown", cwd=tmp_path,
                       HUBWATCH_PUBLIC_URL="https://hw.example")
    assert result.exit_code == 1
    md = result.output
    assert md.startswith("## hubwatch: ❌ 1 pin fails the gate\n")
    assert "1 clean" not in md.split("| | pin |")[1]  # the clean pin is counted, not listed
    assert f"Move to `{L1}`" in md
    assert "[compare](<https://hw.example/models/acme/llama-small/compare/89abcdef0123...0123456789ab>)" in md
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "app.py").write_text(f'AutoModel.from_pretrained("acme/tiny", revision="{L1[:0]}fedcba9")\n')
    ok = run_check(advised_store_url, "clean", "--format", "markdown", cwd=tmp_path)
    assert ok.exit_code == 0 and ok.output.startswith("## hubwatch: ✅ no pin fails the gate")


def test_json_flag_is_format_json_and_output_writes_a_file(advised_store_url: str, tmp_path: Path) -> None:
    make_project(tmp_path / "proj")
    flag = run_check(advised_store_url, "proj", "--json", cwd=tmp_path)
    option = run_check(advised_store_url, "proj", "--format", "json", cwd=tmp_path)
    assert flag.exit_code == option.exit_code == 1 and flag.output == option.output
    out = tmp_path / "report.json"
    written = run_check(advised_store_url, "proj", "--json", "--output", str(out), cwd=tmp_path)
    assert written.exit_code == 1 and written.output == ""
    assert json.loads(out.read_text()) == json.loads(flag.output)


def test_format_usage_errors(advised_store_url: str, tmp_path: Path) -> None:
    make_project(tmp_path / "proj")
    both = run_check(advised_store_url, "proj", "--json", "--format", "sarif", cwd=tmp_path)
    assert both.exit_code == 2 and "--json is --format json" in both.output
    table = run_check(advised_store_url, "proj", "--output", "x.txt", cwd=tmp_path)
    assert table.exit_code == 2 and "--output writes a report format" in table.output
    assert not (tmp_path / "x.txt").exists()


def test_format_choices_are_the_renderers() -> None:
    from hubwatch.cli.check import _FORMATS
    from hubwatch.pincheck.formats import FORMATS

    assert _FORMATS == FORMATS


def test_a_dataset_pin_is_named_as_a_dataset_in_every_format(advised_store_url: str, tmp_path: Path) -> None:
    """A dataset and a model of one org/name, pinned at the same commit: every report names the
    dataset `datasets/org/name`, so nobody reads its line as the model's (whose pin fails the gate)."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "app.py").write_text("\n".join([
        "from datasets import load_dataset",
        "from transformers import AutoModel",
        f'm = AutoModel.from_pretrained("acme/llama-small", revision="{L2}")',
        f'd = load_dataset("acme/llama-small", revision="{L2}")',
    ]) + "\n", encoding="utf-8")
    table = run_check(advised_store_url, "proj", cwd=tmp_path)
    assert table.exit_code == 1
    assert f"app.py:3  acme/llama-small@{L2[:12]}  affected" in table.output
    assert f"app.py:4  datasets/acme/llama-small@{L2[:12]}  unknown" in table.output
    failing = [line for line in table.output.splitlines() if "fail" in line and "app.py:" in line]
    assert failing and all("datasets/" not in line for line in failing)
    report = json.loads(run_check(advised_store_url, "proj", "--format", "json", cwd=tmp_path).output)
    repos = {p["line"]: p["repo"] for p in report["pins"]}
    assert repos == {3: "acme/llama-small", 4: "datasets/acme/llama-small"}
    md = run_check(advised_store_url, "proj", "--format", "markdown", cwd=tmp_path).output
    assert "datasets/acme/llama-small" in md
