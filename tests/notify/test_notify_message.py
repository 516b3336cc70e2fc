"""A message's worst severity is the domain's `Severity`, ranked by `Severity.rank`: the outbox's text
is parsed once (an unknown or missing value is no severity), and shown as its plain value."""

from __future__ import annotations

from hubwatch.domain.records import Severity
from hubwatch.notify.message import render, severity_of


def payload(sha: str, severity: object) -> dict[str, object]:
    return {"repo": "acme/tiny", "sha": sha * 40, "title": "update", "worst_severity": severity, "changes": []}


def test_severity_text_is_parsed_to_the_domain_value() -> None:
    assert severity_of("critical") is Severity.CRITICAL
    assert severity_of("severe") is None and severity_of(None) is None and severity_of(3) is None


def test_the_worst_of_a_group_is_ranked_by_the_domain() -> None:
    out = render([payload("a", "low"), payload("b", "high"), payload("c", "bogus"), payload("d", None)],
                 "https://hw.example", key="k")  # fmt: skip
    assert out.title.startswith("[HIGH] ") and out.data["worst_severity"] == "high"
    assert "Worst severity: low" in out.text and "Worst severity: none" in out.text
    assert "Severity." not in out.text + out.markdown + out.title


def test_no_severity_gives_no_tag() -> None:
    out = render([payload("a", None)], "https://hw.example", key="k")
    assert not out.title.startswith("[") and out.data["worst_severity"] is None
