"""recent_changes: newest first, filtered by repo, org, kinds and minimum severity."""

from __future__ import annotations

import pytest
from hubwatch.storage import InvalidRecord, Store
from hubwatch.domain.records import Kind, RepoId, Severity
from storage_helpers import advisory, change, rev, sha

LLAMA = RepoId("meta-llama", "Llama-3.1-8B")
LLAMA2 = RepoId("meta-llama", "Llama-2-7b-hf")
QWEN = RepoId("Qwen", "Qwen2.5-0.5B")


@pytest.fixture
def filled(store: Store) -> Store:
    def put(repo: RepoId, label: str, parent: str | None, day: int, *changes: object, advisories=()) -> None:  # type: ignore[no-untyped-def]
        assert store.save_revision(repo, rev(label, parent, day=day), [], {}, list(changes), None, list(advisories))  # type: ignore[arg-type]

    put(LLAMA, "l1", None, 0)  # no changes: not a feed item
    put(
        LLAMA,
        "l2",
        "l1",
        3,
        change(Kind.METADATA, Severity.INFO, "config.json:transformers_version"),
        change(Kind.SPECIAL_TOKENS, Severity.HIGH, "generation_config.json:eos_token_id"),
        advisories=[advisory(LLAMA, "x_HW-L2", "l2", [{"introduced": sha("l2")}])],
    )
    put(LLAMA2, "m1", None, 1, change(Kind.LICENSE, Severity.MEDIUM, "README.md:license"))
    put(QWEN, "q1", None, 2, change(Kind.CHAT_TEMPLATE, Severity.HIGH, "tokenizer_config.json:chat_template"))
    put(QWEN, "q2", "q1", 4, change(Kind.METADATA, Severity.INFO, "config.json:_name_or_path"))
    return store


def shas(items: list) -> list[str]:  # type: ignore[type-arg]
    return [i.revision.sha for i in items]


def test_newest_first_without_filters(filled: Store) -> None:
    items = filled.repos.recent_changes(10)
    assert shas(items) == [sha("q2"), sha("l2"), sha("q1"), sha("m1")]
    assert items[1].repo == LLAMA and items[1].advisory_ids == ["x_HW-L2"]
    assert [c.kind for c in items[1].changes] == [Kind.METADATA, Kind.SPECIAL_TOKENS]
    assert shas(filled.repos.recent_changes(2)) == [sha("q2"), sha("l2")]
    assert filled.repos.recent_changes(0) == []


def test_filters(filled: Store) -> None:
    assert shas(filled.repos.recent_changes(10, repo=QWEN)) == [sha("q2"), sha("q1")]
    assert shas(filled.repos.recent_changes(10, org="meta-llama")) == [sha("l2"), sha("m1")]
    high = filled.repos.recent_changes(10, min_severity=Severity.HIGH)
    assert shas(high) == [sha("l2"), sha("q1")]
    assert [c.kind for c in high[0].changes] == [Kind.SPECIAL_TOKENS]  # only the matching changes
    assert shas(filled.repos.recent_changes(10, min_severity="medium")) == [sha("l2"), sha("q1"), sha("m1")]
    meta = filled.repos.recent_changes(10, kinds=["metadata"])
    assert shas(meta) == [sha("q2"), sha("l2")]
    assert all(c.kind is Kind.METADATA for item in meta for c in item.changes)
    both = filled.repos.recent_changes(10, org="meta-llama", kinds=[Kind.LICENSE, Kind.METADATA], min_severity="info")
    assert shas(both) == [sha("l2"), sha("m1")]
    assert filled.repos.recent_changes(10, repo=QWEN, kinds=[Kind.LICENSE]) == []


def test_bad_filters_are_named(filled: Store) -> None:
    with pytest.raises(InvalidRecord, match="unknown change kind 'weight'"):
        filled.repos.recent_changes(5, kinds=["weight"])
    with pytest.raises(InvalidRecord, match="unknown severity 'urgent'"):
        filled.repos.recent_changes(5, min_severity="urgent")
