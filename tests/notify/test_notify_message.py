"""A message's worst severity is the domain's `Severity`, as the store hands it back
(`storage.notify.notify.typed_payload`), ranked by `Severity.rank` and shown as its plain value."""

from __future__ import annotations

from hubwatch.domain.records import Severity
from hubwatch.notify.message import render


def payload(sha: str, severity: Severity | None) -> dict[str, object]:
    return {"repo": "acme/tiny", "sha": sha * 40, "title": "update", "worst_severity": severity, "changes": []}


def test_the_worst_of_a_group_is_ranked_by_the_domain() -> None:
    out = render([payload("a", Severity.LOW), payload("b", Severity.HIGH), payload("c", Severity.MEDIUM),
                  payload("d", None)], "https://hw.example", key="k")  # fmt: skip
    assert out.title.startswith("[HIGH] ") and out.data["worst_severity"] == "high"
    assert "Worst severity: low" in out.text and "Worst severity: none" in out.text
    assert "Severity." not in out.text + out.markdown + out.title


def test_no_severity_gives_no_tag() -> None:
    out = render([payload("a", None)], "https://hw.example", key="k")
    assert not out.title.startswith("[") and out.data["worst_severity"] is None
