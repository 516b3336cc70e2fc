"""`hubwatch check --format sarif`: valid SARIF 2.1.0 (the packaged OASIS schema), read back by a SARIF
library, each result on the revision string itself, fingerprints that survive lines moving, and fixes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pysarif
from check_formats_helpers import L1, L2, UNKNOWN, make_project, run_check

from hubwatch.domain.records import Kind
from hubwatch.pincheck.format_sarif import KIND_HELP, sarif_schema


def sarif(url: str, tmp_path: Path, *args: str, above: int = 0, **env: str | None) -> tuple[int, dict[str, Any]]:
    make_project(tmp_path / "proj", above)
    result = run_check(url, "proj", "--format", "sarif", *args, cwd=tmp_path, **env)
    assert result.exit_code in (0, 1), result.output
    log: dict[str, Any] = json.loads(result.output)
    jsonschema.Draft4Validator(sarif_schema(), format_checker=jsonschema.FormatChecker()).validate(log)
    return result.exit_code, log


def test_sarif_validates_and_reads_back_with_results_on_the_revision(advised_store_url: str, tmp_path: Path) -> None:
    code, log = sarif(advised_store_url, tmp_path)
    assert code == 1
    read = pysarif.load_from_json(json.dumps(log))
    assert read.version == "2.1.0"
    run = read.runs[0]
    assert run.tool.driver.name == "hubwatch"
    text = (tmp_path / "proj" / "app.py").read_text().splitlines()
    by_revision = {}
    for result in run.results:
        where = result.locations[0].physical_location
        assert where.artifact_location.uri == "proj/app.py"
        region = where.region
        line = text[region.start_line - 1]
        by_revision[line[region.start_column - 1:region.end_column - 1]] = result
    # failing and affected pins have a result; the clean, unknown (not --strict) and unpinned ones do not
    assert set(by_revision) == {L2, L1}
    assert by_revision[L2].level == "error" and by_revision[L1].level == "warning"
    assert by_revision[L2].rule_id == "hubwatch/pickle" and by_revision[L1].rule_id == "hubwatch/chat_template"
    rules = {r.id: r for r in run.tool.driver.rules}
    assert set(rules) == {"hubwatch/pickle", "hubwatch/chat_template"}
    assert all(r.help.text and r.help.markdown for r in rules.values())
    assert [rules_list.id for rules_list in run.tool.driver.rules][by_revision[L2].rule_index] == "hubwatch/pickle"


def test_strict_adds_the_unknown_pin_as_an_error(advised_store_url: str, tmp_path: Path) -> None:
    _, log = sarif(advised_store_url, tmp_path, "--strict")
    results = log["runs"][0]["results"]
    unknown = [r for r in results if r["properties"]["revision"] == UNKNOWN]
    assert len(unknown) == 1 and unknown[0]["level"] == "error" and unknown[0]["ruleId"] == "hubwatch/unknown-pin"


def test_fingerprints_stay_when_lines_move(advised_store_url: str, tmp_path: Path) -> None:
    _, before = sarif(advised_store_url, tmp_path / "a")
    _, after = sarif(advised_store_url, tmp_path / "b", above=7)

    def prints(log: dict[str, Any]) -> dict[str, tuple[str, int]]:
        return {r["properties"]["revision"]: (r["partialFingerprints"]["hubwatchPin/v1"],
                                              r["locations"][0]["physicalLocation"]["region"]["startLine"])
                for r in log["runs"][0]["results"]}

    a, b = prints(before), prints(after)
    assert {k: v[0] for k, v in a.items()} == {k: v[0] for k, v in b.items()}  # same alert
    assert all(b[k][1] == a[k][1] + 7 for k in a)  # on its new line
    assert len({v[0] for v in a.values()}) == len(a)  # one per pin


def test_fix_replaces_exactly_the_revision_with_the_suggestion(advised_store_url: str, tmp_path: Path) -> None:
    _, log = sarif(advised_store_url, tmp_path)
    failing = next(r for r in log["runs"][0]["results"] if r["level"] == "error")
    (change,) = failing["fixes"][0]["artifactChanges"]
    (replacement,) = change["replacements"]
    region, new = replacement["deletedRegion"], replacement["insertedContent"]["text"]
    lines = (tmp_path / "proj" / "app.py").read_text().splitlines()
    line = lines[region["startLine"] - 1]
    assert line[region["startColumn"] - 1:region["endColumn"] - 1] == L2 and new == L1
    fixed = line[:region["startColumn"] - 1] + new + line[region["endColumn"] - 1:]
    assert fixed == f'a = AutoModel.from_pretrained("acme/llama-small", revision="{L1}")'


def test_links_to_advisory_pages_when_a_web_app_is_known(advised_store_url: str, tmp_path: Path) -> None:
    _, log = sarif(advised_store_url, tmp_path, HUBWATCH_PUBLIC_URL="https://hw.example/")
    run = log["runs"][0]
    assert {r["id"]: r["helpUri"] for r in run["tool"]["driver"]["rules"]}["hubwatch/pickle"] == \
        "https://hw.example/?kind=pickle"
    failing = next(r for r in run["results"] if r["level"] == "error")
    ids = failing["properties"]["advisories"]
    assert f"(<https://hw.example/advisories/{ids[0]}>)" in failing["message"]["markdown"]
    assert "https://hw.example/models/acme/llama-small/compare/89abcdef0123...0123456789ab" in \
        failing["message"]["markdown"]


def test_every_change_kind_has_help() -> None:
    assert set(KIND_HELP) == {k.value for k in Kind}


def test_the_schema_check_is_real(advised_store_url: str, tmp_path: Path) -> None:
    _, log = sarif(advised_store_url, tmp_path)
    log["runs"][0]["results"][0]["level"] = "fatal"  # not a SARIF level
    try:
        jsonschema.Draft4Validator(sarif_schema()).validate(log)
    except jsonschema.ValidationError as exc:
        assert "fatal" in exc.message
    else:
        raise AssertionError("the packaged schema accepted a result level SARIF does not have")


def test_a_notebook_pin_sits_on_its_revision_in_the_notebook_file(advised_store_url: str, tmp_path: Path) -> None:
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# eval\n"]},
                    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                     "source": ["from transformers import AutoModel\n",
                                f'm = AutoModel.from_pretrained("acme/llama-small", revision="{L2}")\n']}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "eval.ipynb").write_text(json.dumps(nb, indent=1))
    result = run_check(advised_store_url, "nb", "--format", "sarif", cwd=tmp_path)
    log = json.loads(result.output)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    (found,) = log["runs"][0]["results"]
    region = found["locations"][0]["physicalLocation"]["region"]
    line = (tmp_path / "nb" / "eval.ipynb").read_text().splitlines()[region["startLine"] - 1]
    assert line[region["startColumn"] - 1:region["endColumn"] - 1] == L2
    assert found["properties"]["cell"] == 2


def test_columns_count_utf16_code_units(advised_store_url: str, tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    line = f'm = load("🦙 llama", AutoModel.from_pretrained("acme/llama-small", revision="{L2}"))'
    (tmp_path / "proj" / "app.py").write_text(line + "\n", encoding="utf-8")
    log = json.loads(run_check(advised_store_url, "proj", "--format", "sarif", cwd=tmp_path).output)
    assert log["runs"][0]["columnKind"] == "utf16CodeUnits"
    region = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    units = line.encode("utf-16-le")
    start, end = (region["startColumn"] - 1) * 2, (region["endColumn"] - 1) * 2
    assert units[start:end].decode("utf-16-le") == L2  # the llama (U+1F999) counts two units before it
    assert region["startColumn"] == line.index(L2) + 2
