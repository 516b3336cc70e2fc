"""The diff view of the pages: line classes, intra-line marks, notes and visible whitespace."""

from __future__ import annotations

from hubwatch.feeds.builders.diffview import diff_lines

_ONE_LINE = (
    "--- old/system_user\n+++ new/system_user\n@@ -1 +1 @@\n"
    "-You are a helpful assistant.<|User|>Hi<|Assistant|>\n\\ No newline at end of file\n"
    "+You are a helpful assistant.<|User|>Hi<|Assistant|><think>\n"
)


def _changed(line) -> list[str]:  # type: ignore[no-untyped-def]
    return [s.text for s in line.segments if s.changed]


def test_replaced_line_marks_only_what_changed() -> None:
    lines = diff_lines(_ONE_LINE)
    assert [line.kind for line in lines] == ["file", "file", "hunk", "del", "note", "add"]
    old, note, new = lines[3], lines[4], lines[5]
    assert old.sign == "-" and new.sign == "+" and note.sign == "\\"
    assert _changed(old) == [] and _changed(new) == ["<think>"]
    assert new.text == "You are a helpful assistant.<|User|>Hi<|Assistant|><think>"
    assert note.text == " No newline at end of file"


def test_pairs_follow_order_and_unrelated_lines_stay_whole() -> None:
    text = "@@ -1,3 +1,3 @@\n keep\n-alpha = 1\n-completely different\n+alpha = 2\n+zzzzzzzzzzzzzzzzzzzz\n"
    lines = diff_lines(text)
    kinds = [(line.kind, line.text) for line in lines]
    assert kinds == [("hunk", "@@ -1,3 +1,3 @@"), ("ctx", "keep"), ("del", "alpha = 1"),
                     ("del", "completely different"), ("add", "alpha = 2"), ("add", "zzzzzzzzzzzzzzzzzzzz")]
    assert _changed(lines[2]) == ["1"] and _changed(lines[4]) == ["2"]
    assert _changed(lines[3]) == [] and _changed(lines[5]) == []  # nothing in common: no marks


def test_whitespace_only_changes_are_flagged_blank() -> None:
    lines = diff_lines("-a b\n+a  b\n+trailing \t\n")
    marks = [s for line in lines for s in line.segments if s.changed]
    assert [(m.text, m.blank) for m in marks] == [(" ", True), ("  ", True), (" \t", True)]


def test_marks_cover_whole_words_not_scattered_letters() -> None:
    old, new = diff_lines("-<|start_header_id|>user<|end_header_id|>\n+<|start_header_id|>system<|end_header_id|>\n")
    assert _changed(old) == ["user"] and _changed(new) == ["system"]


def test_very_long_lines_are_not_compared_character_by_character() -> None:
    old, new = "x" * 15_000, "x" * 14_999 + "y"
    lines = diff_lines(f"-{old}\n+{new}\n")
    assert [line.text for line in lines] == [old, new] and not any(s.changed for line in lines for s in line.segments)
