"""The pin-bump commit's message (git_branch.commit_message): a pure function of the moves."""

from __future__ import annotations

from check_formats_helpers import L1, L2, T1

from hubwatch.domain.records import RepoId
from hubwatch.pincheck.formats import Move
from hubwatch.pincheck.git_branch import commit_message
from hubwatch.pincheck.pins import Pin
from hubwatch.pincheck.report import PinReport, Suggestion


def report(path: str, line: int, repo: str, old: str, new: str, resolves: tuple[str, ...],
           on_main_line: bool = True) -> PinReport:
    pin = Pin(path, line, RepoId.parse(repo), old, "python")
    return PinReport(pin, "affected" if resolves else "clean", old, (), suggestion=Suggestion(new, resolves, ()),
                     on_main_line=on_main_line)


def test_each_pin_what_it_resolves_and_a_dropped_commit() -> None:
    moves = [Move(report("src/a.py", 3, "acme/llama-small", L2, L1, ("X-2", "X-1")), L1),
             Move(report("cfg/b.yaml", 9, "acme/tiny", "9" * 40, T1, (), on_main_line=False), T1)]
    message = commit_message(moves, "https://hw.example/")
    title, summary, body, tail = message.rstrip("\n").split("\n\n")
    assert title == "hubwatch: move 2 model pins (acme/llama-small, acme/tiny)"
    assert summary == "Resolves X-1, X-2."
    assert body.splitlines() == [
        f"- src/a.py:3: acme/llama-small 89abcdef0123 -> {L1}",
        "  resolves X-2, X-1",
        "  compare: https://hw.example/models/acme/llama-small/compare/89abcdef0123...0123456789ab",
        f"- cfg/b.yaml:9: acme/tiny 999999999999 -> {T1}",
        "  the pinned commit was dropped from the main line upstream",
        "  compare: https://hw.example/models/acme/tiny/compare/999999999999...fedcba900000",
    ]
    assert tail == "Made by `hubwatch check --fix --branch`."


def test_without_a_web_app_no_compare_line() -> None:
    message = commit_message([Move(report("a.py", 1, "acme/tiny", "9" * 40, T1, (), on_main_line=False), T1)])
    assert "compare:" not in message and "Moves pins off commits dropped upstream." in message
