"""Every CI format of `hubwatch check` keeps text from elsewhere (advisory summaries and ids, file names)
literal: no extra workflow command, no Markdown link, HTML or mention, XML that still parses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import junitparser
from check_formats_helpers import L1, L2

from hubwatch.domain.records import RepoId, Severity
from hubwatch.pincheck.format_github import escape_property, to_github
from hubwatch.pincheck.format_junit import to_junit
from hubwatch.pincheck.format_markdown import to_markdown
from hubwatch.pincheck.format_sarif import sarif_schema, to_sarif
from hubwatch.pincheck.formats import CheckedRun, md_code, md_text
from hubwatch.pincheck.pins import scan_path
from hubwatch.pincheck.report import AdvisoryHit, PinReport, Suggestion

EVIL = "x\r\n::error file=evil.py::pwned %0A [click](https://evil.example) <img src=x onerror=1> @octocat | a `b` \x00\x1b"
EVIL_ID = "X-1]\n::warning::(evil) <b>"


def hostile_run(tmp_path: Path) -> CheckedRun:
    name = "we, ird:name%.py"
    (tmp_path / name).write_text(f'm = AutoModel.from_pretrained("acme/llama-small", revision="{L2}")\n')
    (pin,) = scan_path(tmp_path).pins
    hit = AdvisoryHit(EVIL_ID, Severity.HIGH, EVIL, "2024-06-01T00:00:00Z", ("pickle",), "hazard")
    report = PinReport(pin, "affected", L2, (hit,), note=EVIL, suggestion=Suggestion(L1, (EVIL_ID,), ()))
    return CheckedRun((report,), Severity.HIGH, False, tmp_path, "https://hw.example", base=tmp_path)


def test_github_commands_stay_one_line_each_with_escaped_properties(tmp_path: Path) -> None:
    out = to_github(hostile_run(tmp_path))
    lines = out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("::error file=") and lines[1].startswith("hubwatch:")
    props, _, message = lines[0][len("::error "):].partition("::")
    assert f"file={escape_property('we, ird:name%.py')}," in props
    assert escape_property("we, ird:name%.py") == "we%2C ird%3Aname%25.py"
    assert "\r" not in out and "%0D%0A::error file=evil.py::pwned %250A" in message


def test_markdown_has_no_link_html_or_mention_from_the_record(tmp_path: Path) -> None:
    md = to_markdown(hostile_run(tmp_path))
    for raw in (r"\[click\]\(", "<img", "<b>", "@octocat", "`b`"):  # none left unescaped
        assert not re.search(r"(?<!\\)" + raw, md), raw
    assert "\\[click\\]\\(https\\://evil.example\\)" in md and "\\<img src=x onerror=1\\>" in md
    assert "\n::" not in md and "\r" not in md and "\x00" not in md and "\x1b" not in md
    assert all(line.count("|") - line.count("\\|") == 5 for line in md.splitlines() if line.startswith("| ❌"))
    assert md_code("a `b` c") == "``a `b` c``" and md_text("*x*") == "\\*x\\*"


def test_junit_parses_with_the_text_kept(tmp_path: Path) -> None:
    xml = to_junit(hostile_run(tmp_path))
    (tmp_path / "report.xml").write_text(xml, encoding="utf-8")
    suite = next(iter(junitparser.JUnitXml.fromfile(str(tmp_path / "report.xml"))))
    (case,) = list(suite)
    (failure,) = case.result
    assert isinstance(failure, junitparser.Failure)
    assert "[click](https://evil.example) <img src=x onerror=1>" in (failure.text or "")
    assert "\x00" not in xml and "\x1b" not in xml


def test_sarif_still_validates(tmp_path: Path) -> None:
    log = json.loads(to_sarif(hostile_run(tmp_path)))
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    result = log["runs"][0]["results"][0]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "we, ird:name%.py"
    assert "[click](" not in result["message"]["markdown"] and EVIL.strip("\x00\x1b") in result["message"]["text"]
    assert "(<https://hw.example/advisories/X-1%5D%0A%3A%3Awarning%3A%3A%28evil%29%20%3Cb%3E>)" in \
        result["message"]["markdown"]
