"""`hubwatch check --format junit`: JUnit XML for GitLab, Jenkins and any CI that reads test reports.

One `testsuite` (hubwatch check), one `testcase` per pin (`classname` the file, `name` the pin and
its line), a `failure` for each pin failing the gate (its reason as the message, the advisories in the
body), `skipped` for an unpinned or unknown pin that does not fail. Text is escaped by the XML writer;
characters XML 1.0 cannot carry at all (most C0 controls) are dropped first.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from hubwatch.pincheck.formats import CheckedRun, pin_label
from hubwatch.pincheck.report import PinReport, worst_first

__all__ = ["to_junit", "xml_safe"]

_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """`text` without the characters an XML 1.0 document cannot hold, even escaped."""
    return _ILLEGAL.sub("", text)


def _details(report: PinReport) -> str:
    lines = [f"{report.pin.where} {pin_label(report.pin)} {report.status}"]
    for h in worst_first(report.hits):
        severity = h.severity.value if h.severity else "unknown severity"
        lines.append(f"{severity} {h.direction or 'advisory'} {h.id}: {h.summary}"
                     f"{' (acknowledged)' if h.ignored else ''}")
    if report.suggestion is not None:
        resolves = f" (resolves {', '.join(report.suggestion.resolves)})" if report.suggestion.resolves else ""
        lines.append(f"move to {report.suggestion.commit}{resolves}")
    if report.note:
        lines.append(report.note)
    return "\n".join(lines)


def _case(run: CheckedRun, report: PinReport) -> ET.Element:
    case = ET.Element("testcase", {"classname": xml_safe(run.uri(report.pin)),
                                   "name": xml_safe(f"{pin_label(report.pin)} (line {report.pin.line})"),
                                   "file": xml_safe(run.uri(report.pin)), "line": str(report.pin.line),
                                   "time": "0"})
    verdict = run.verdict(report)
    if verdict.fails:
        failure = ET.SubElement(case, "failure", {"message": xml_safe(verdict.reason), "type": "hubwatch.gate"})
        failure.text = xml_safe(_details(report))
    elif report.status in ("unknown", "unpinned"):
        ET.SubElement(case, "skipped", {"message": xml_safe(f"{report.status}: {report.note or verdict.reason}")})
    else:
        out = ET.SubElement(case, "system-out")
        out.text = xml_safe(f"{_details(report)}\npasses the gate: {verdict.reason}")
    return case


def to_junit(run: CheckedRun) -> str:
    cases = [_case(run, r) for r in run.reports]
    failures = sum(1 for c in cases if c.find("failure") is not None)
    skipped = sum(1 for c in cases if c.find("skipped") is not None)
    attrs = {"name": "hubwatch check", "tests": str(len(cases)), "failures": str(failures), "errors": "0",
             "skipped": str(skipped), "time": "0"}
    suites = ET.Element("testsuites", attrs)
    suite = ET.SubElement(suites, "testsuite", attrs)
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", {"name": "fail-on", "value": run.threshold.value})
    ET.SubElement(props, "property", {"name": "strict", "value": str(run.strict).lower()})
    suite.extend(cases)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
