"""Reverts: removing a hazard closes its advisory; undoing an update is advised as itself, linked; no duplicates."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Sequence

from hubwatch.settings import Settings
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, Direction, Kind, RepoId, RevisionRecord, Severity
from hubwatch.advisories.advise import plan_advisories
from hubwatch.advisories.osv import advisory_id
from osv_schema_check import assert_schema_valid

REPO = RepoId("acme", "llama")
SETTINGS = Settings()
T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)


def sha(n: int) -> str:
    return f"{n:040x}"


def rev(n: int, days: float | None = None) -> RevisionRecord:
    return RevisionRecord(sha(n), sha(n - 1), T0 + timedelta(days=n if days is None else days), f"commit {n}")


def ch(kind: Kind, sev: Severity, file: str, key: str | None, old: object, new: object,
       direction: str = "hazard") -> ChangeRecord:
    path = f"{file}:{key}" if key else file
    return ChangeRecord(kind, sev, path, f"{path}: {old} → {new}",
                        {"file": file, "key": key, "old": old, "new": new}, direction)


class Upserts:
    """What the store does with the returned records: upsert by id (the later `modified` wins)."""

    def __init__(self) -> None:
        self.records: dict[str, AdvisoryRecord] = {}

    def apply(self, n: int, changes: Sequence[ChangeRecord], days: float | None = None) -> list[AdvisoryRecord]:
        out = plan_advisories(REPO, rev(n, days), changes, list(self.records.values()), SETTINGS)
        assert len({r.id for r in out}) == len(out), "one save must not carry an id twice"
        for record in out:
            assert_schema_valid(record.osv)
            old = self.records.get(record.id)
            assert old is None or record.modified > old.modified
            self.records[record.id] = record
        return out


ADD_PICKLE = ch(Kind.PICKLE, Severity.HIGH, "pytorch_model.bin", None, None, {"size": 100})
DROP_PICKLE = ch(Kind.FILES, Severity.INFO, "pytorch_model.bin", None, {"size": 100}, None, "update")


def test_removing_the_risky_file_closes_the_earlier_advisory() -> None:
    db = Upserts()
    [opened] = db.apply(2, [ADD_PICKLE])
    out = db.apply(5, [DROP_PICKLE])
    assert [r.id for r in out] == [opened.id]  # an update, never a second record
    closed = out[0]
    assert closed.osv["affected"][0]["ranges"][0]["events"] == [{"introduced": sha(2)}, {"fixed": sha(5)}]
    assert closed.osv["modified"] == "2024-05-06T00:00:00Z"
    assert closed.osv["published"] == opened.osv["published"]
    assert closed.modified > opened.modified and closed.withdrawn is None
    assert {"type": "FIX", "url": f"https://huggingface.co/acme/llama/commit/{sha(5)}"} in closed.osv["references"]
    assert closed.osv["database_specific"]["changes"][0]["reverted_by"] == sha(5)
    assert "removed upstream in" in closed.osv["details"]
    assert len(db.records) == 1


def test_value_set_back_closes_and_the_revert_is_not_advised_again() -> None:
    db = Upserts()
    eos = ch(Kind.SPECIAL_TOKENS, Severity.HIGH, "generation_config.json", "eos_token_id", 2, [2, 9])
    [opened] = db.apply(2, [eos])
    back = ch(Kind.SPECIAL_TOKENS, Severity.HIGH, "generation_config.json", "eos_token_id", [2, 9], 2)
    out = db.apply(3, [back])
    assert [r.id for r in out] == [opened.id]
    assert out[0].osv["database_specific"]["fixed_by"] == sha(3)


def test_partial_revert_notes_it_but_keeps_the_advisory_open() -> None:
    db = Upserts()
    code = ch(Kind.CUSTOM_CODE, Severity.HIGH, "config.json", "auto_map", None, {"AutoModel": "m.M"})
    [opened] = db.apply(2, [ADD_PICKLE, code])
    [partial] = db.apply(3, [DROP_PICKLE])
    assert partial.id == opened.id
    assert partial.osv["affected"][0]["ranges"][0]["events"] == [{"introduced": sha(2)}]
    assert partial.modified > opened.modified
    undo_code = ch(Kind.CUSTOM_CODE, Severity.MEDIUM, "config.json", "auto_map", {"AutoModel": "m.M"}, None, "update")
    [closed] = db.apply(4, [undo_code])
    assert closed.osv["affected"][0]["ranges"][0]["events"][-1] == {"fixed": sha(4)}


def test_a_key_renamed_back_is_a_revert() -> None:
    db = Upserts()

    def rename(old_key: str, new_key: str) -> ChangeRecord:
        return ChangeRecord(Kind.ARCHITECTURE, Severity.LOW, f"config.json:{new_key}", f"{old_key} renamed",
                            {"file": "config.json", "key": new_key, "old": {old_key: 71}, "new": {new_key: 71},
                             "renamed_from": old_key}, Direction.HAZARD)

    [opened] = db.apply(2, [rename("n_head", "num_attention_heads")])
    assert [r.id for r in db.apply(3, [rename("n_layer", "num_hidden_layers")])] != [opened.id]  # another key
    [closed] = db.apply(4, [rename("num_attention_heads", "n_head")])
    assert closed.id == opened.id and closed.osv["database_specific"]["fixed_by"] == sha(4)


def test_a_different_value_is_not_a_revert() -> None:
    db = Upserts()
    [opened] = db.apply(2, [ch(Kind.LICENSE, Severity.MEDIUM, "README.md", "license", "mit", "llama2")])
    out = db.apply(3, [ch(Kind.LICENSE, Severity.MEDIUM, "README.md", "license", "llama2", "llama3")])
    assert [r.id for r in out] != [opened.id] and len(db.records) == 2
    assert db.records[opened.id].osv["affected"][0]["ranges"][0]["events"] == [{"introduced": sha(2)}]


def test_estimate_changes_without_values_never_match_each_other() -> None:
    db = Upserts()
    moved = ChangeRecord(Kind.CONFIG, Severity.MEDIUM, "estimate", "memory moved",
                         {"file": "config.json", "key": None, "old": None, "new": None, "fit_changed": True})
    db.apply(2, [moved])
    out = db.apply(3, [moved])
    assert len(out) == 1 and out[0].revision_sha == sha(3) and len(db.records) == 2


def test_undoing_an_update_is_advised_by_its_own_meaning_and_linked() -> None:
    """Issue 9: undoing an update used to be forced into a "risk" at the severity of what it undid;
    now the undo is what the classifier says it is (here an update), and the two are related."""
    db = Upserts()
    fixed = ch(Kind.CHAT_TEMPLATE, Severity.HIGH, "tokenizer_config.json", "chat_template", "bad", "good", "update")
    [update] = db.apply(2, [fixed])
    undo = ch(Kind.CHAT_TEMPLATE, Severity.LOW, "tokenizer_config.json", "chat_template", "good", "bad", "update")
    out = {r.id: r for r in db.apply(3, [undo])}
    undo_id = advisory_id("x_HUBWATCH", REPO, sha(3), 2024, "update")
    assert set(out) == {update.id, undo_id}
    undone = out[undo_id]
    assert undone.osv["affected"][0]["ranges"][0]["events"] == [{"introduced": "0"}, {"fixed": sha(3)}]
    assert undone.osv["database_specific"]["max_severity"] == "low"  # its own severity
    assert undone.osv["related"] == [update.id]
    old = out[update.id]
    assert old.osv["related"] == [undone.id] and old.osv["database_specific"]["reverted_by"] == sha(3)
    assert old.osv["affected"] == update.osv["affected"]  # still true: pins before it lacked it
    # a hazard undoing an update is a hazard (e.g. add_bos_token turned off again)
    bos_on = ch(Kind.SPECIAL_TOKENS, Severity.HIGH, "tokenizer_config.json", "add_bos_token", False, True, "update")
    db.apply(4, [bos_on])
    bos_off = ch(Kind.SPECIAL_TOKENS, Severity.HIGH, "tokenizer_config.json", "add_bos_token", True, False)
    [hazard, _] = db.apply(5, [bos_off])
    assert hazard.osv["affected"][0]["ranges"][0]["events"] == [{"introduced": sha(5)}]


def test_undoing_part_of_an_update_says_which_part_stands() -> None:
    """Issue 31: one update brought a high pad_token fix and a low use_fast change; upstream put
    back only use_fast. The update's text must not say upstream undid it: the pad_token change stands."""
    db = Upserts()
    pad = ch(Kind.SPECIAL_TOKENS, Severity.HIGH, "tokenizer_config.json", "pad_token", None, "<pad>", "update")
    fast = ch(Kind.TOKENIZER, Severity.LOW, "tokenizer_config.json", "use_fast", True, False, "update")
    [update] = db.apply(2, [pad, fast])
    back = ch(Kind.TOKENIZER, Severity.LOW, "tokenizer_config.json", "use_fast", False, True, "update")
    out = {r.id: r for r in db.apply(3, [back])}
    old = out[update.id]
    details = old.osv["details"]
    assert "Upstream undid this update" not in details
    assert f"Upstream undid part of this update in `{sha(3)[:12]}` (1 of 2 changes)" in details
    assert "the rest stands: high `tokenizer_config.json:pad_token`" in details
    marks = {c["path"]: c.get("undone_in") for c in old.osv["database_specific"]["changes"]}
    assert marks == {"tokenizer_config.json:pad_token": None, "tokenizer_config.json:use_fast": sha(3)}
    # putting pad_token back too: now the whole update is undone, and said so
    pad_back = ch(Kind.SPECIAL_TOKENS, Severity.HIGH, "tokenizer_config.json", "pad_token", "<pad>", None, "update")
    whole = {r.id: r for r in db.apply(4, [pad_back])}[update.id]
    assert "Upstream undid this update in" in whole.osv["details"]
    assert "part of this update" not in whole.osv["details"]


def test_modified_strictly_increases_even_with_out_of_order_commit_dates() -> None:
    db = Upserts()
    [opened] = db.apply(2, [ADD_PICKLE], days=10)
    [closed] = db.apply(3, [DROP_PICKLE], days=9)  # upstream commit dates can go backwards
    assert closed.modified == opened.modified + timedelta(seconds=1)


def test_replaying_a_history_gives_the_same_records() -> None:
    def replay() -> dict[str, AdvisoryRecord]:
        db = Upserts()
        db.apply(2, [ADD_PICKLE, ch(Kind.CHAT_TEMPLATE, Severity.MEDIUM, "t.json", "chat_template", "a", "b", "update")])
        db.apply(3, [ch(Kind.CONTEXT, Severity.MEDIUM, "config.json", "max_position_embeddings", 2048, 4096)])
        db.apply(4, [DROP_PICKLE, ch(Kind.CHAT_TEMPLATE, Severity.MEDIUM, "t.json", "chat_template", "b", "a")])
        return db.records

    first, second = replay(), replay()
    assert first.keys() == second.keys() and len(first) == 4
    assert all(first[k].osv == second[k].osv and first[k].modified == second[k].modified for k in first)


def test_withdrawn_and_other_repo_records_are_left_alone() -> None:
    db = Upserts()
    [opened] = db.apply(2, [ADD_PICKLE])
    other = AdvisoryRecord(opened.id + "x", RepoId("acme", "other"), sha(2), opened.osv, opened.modified)
    withdrawn = AdvisoryRecord(opened.id, REPO, sha(2), opened.osv, opened.modified, withdrawn=opened.modified)
    out = plan_advisories(REPO, rev(3), [DROP_PICKLE], [other, withdrawn], SETTINGS)
    assert out == []  # nothing open to close; the removal itself is info and not advised


def root(n: int) -> RevisionRecord:
    """A commit without a parent (a history squashed upstream), a day after the others."""
    return RevisionRecord(sha(n), None, T0 + timedelta(days=n), f"squashed {n}")


def test_a_commit_compared_with_another_line_carries_its_open_hazards() -> None:
    """`carried`: the changes were measured against the old head, not the parent. Open hazards there
    that the changes do not clear get an `introduced` event at this commit; updates are not advised."""
    db = Upserts()
    [pickle] = db.apply(2, [ADD_PICKLE])
    [code] = db.apply(3, [ch(Kind.CUSTOM_CODE, Severity.HIGH, "modeling.py", None, None, {"size": 5})])
    raised = ch(Kind.LICENSE, Severity.MEDIUM, "README.md", "license", "mit", "other")
    update = ch(Kind.CONFIG, Severity.MEDIUM, "config.json", "eos_token_id", 1, 2, "update")
    carried = [db.records[pickle.id], db.records[code.id]]
    # Parent None: without `carried` nothing is advised (a first revision); with it, as measured.
    assert plan_advisories(REPO, root(9), [raised, DROP_PICKLE, update], list(db.records.values()), SETTINGS) == []
    out = plan_advisories(REPO, root(9), [raised, DROP_PICKLE, update], list(db.records.values()), SETTINGS,
                          carried=carried)
    by_id = {r.id: r for r in out}
    new = [r for r in out if r.id not in (pickle.id, code.id)]
    assert [r.osv["database_specific"]["direction"] for r in new] == ["hazard"]  # the update is not advised
    assert new[0].revision_sha == sha(9)
    # The pickle is gone at the squashed commit: closed there (no introduced); the code still held.
    pickle_events = by_id[pickle.id].osv["affected"][0]["ranges"][0]["events"]
    assert pickle_events == [{"introduced": sha(2)}, {"fixed": sha(9)}]
    code_events = by_id[code.id].osv["affected"][0]["ranges"][0]["events"]
    assert code_events == [{"introduced": sha(3)}, {"introduced": sha(9)}]
    for record in out:
        assert_schema_valid(record.osv)
    # Carried again at the same commit: nothing more to add.
    db.records.update(by_id)
    again = plan_advisories(REPO, root(9), [], list(db.records.values()), SETTINGS, carried=[db.records[code.id]])
    assert again == []
