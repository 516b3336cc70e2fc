"""RepoId and commit shas are matched in full (no trailing newline), and ids compare case-insensitively."""

from __future__ import annotations

import pytest

from hubwatch.domain.records import InvalidRepoId, RepoId, is_commit_sha
from hubwatch.storage.core.validate import as_prefix


@pytest.mark.parametrize(
    "text", ["org/name\n", "org\n/name", " org/name", "org/name ", "org/name\r\n", "org/na\nme", "org/\nname"]
)
def test_ids_with_whitespace_or_newlines_are_refused(text: str) -> None:
    with pytest.raises(InvalidRepoId):
        RepoId.parse(text)


def test_shas_and_prefixes_are_matched_in_full() -> None:
    sha = "a" * 40
    assert is_commit_sha(sha)
    assert not is_commit_sha(sha + "\n")
    assert as_prefix("abc1234") == "abc1234"
    assert as_prefix("abc1234\n") is None
    assert as_prefix(" abc1234") is None


def test_spellings_of_one_id_are_one_repo() -> None:
    a, b = RepoId.parse("Meta-Llama/Llama-2-7b-HF"), RepoId.parse("meta-llama/llama-2-7b-hf")
    assert a == b and hash(a) == hash(b) and a.key == b.key == "meta-llama/llama-2-7b-hf"
    assert str(a) == "Meta-Llama/Llama-2-7b-HF"  # spelled as given
    assert {a: 1}[b] == 1 and len({a, b}) == 1
    assert RepoId.parse("org/a") != RepoId.parse("org/b")
    assert sorted([RepoId("b", "x"), RepoId("a", "y")]) == [RepoId("a", "y"), RepoId("b", "x")]
