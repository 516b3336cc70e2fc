"""The public interface and the taxonomy document stay in step with the code."""

from __future__ import annotations

from pathlib import Path

import hubwatch.diff as diff
from hubwatch.domain.records import Kind
from hubwatch.diff import render_chat_template

DOC = Path(__file__).resolve().parents[2] / "docs" / "changes.md"


def test_public_names() -> None:
    assert set(diff.__all__) == {
        "CONVERSATIONS", "Conversation", "RenderLimits", "RenderResult", "diff_dataset_snapshots", "diff_repo_snapshots", "diff_snapshots",
        "diff_text", "render_chat_template",
    }  # fmt: skip
    for name in diff.__all__:
        assert getattr(diff, name) is not None


def test_every_kind_is_documented_once() -> None:
    rows = [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    documented = [row.split("`")[1] for row in rows]
    assert sorted(documented) == sorted(k.value for k in Kind)


def test_deeply_nested_template_is_refused_not_crashed() -> None:
    template = "{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}"
    result = render_chat_template(template, [{"role": "user", "content": "x"}])
    assert not result.ok and result.error_kind in ("limit", "syntax", "error")
