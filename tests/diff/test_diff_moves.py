"""Issue 9: moves are one change described as a move; templates failing before and after are no news;
a template that breaks is a hazard with keys that its repair clears."""

from __future__ import annotations

from diff_histories import make_snapshot
from hubwatch.diff import diff_snapshots
from hubwatch.domain.records import Kind, Severity

GOOD = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
BROKEN = "{{ raise_exception('no') }}" + GOOD
INJECTS = GOOD.replace("{% endfor %}", "<|injected|>{% endfor %}")


def test_a_key_moved_from_config_to_generation_config_is_one_low_update() -> None:
    old = make_snapshot({"config.json": {"model_type": "llama", "max_length": 4096}, "generation_config.json": {"top_p": 0.9}})
    new = make_snapshot({"config.json": {"model_type": "llama"}, "generation_config.json": {"top_p": 0.9, "max_length": 4096}})
    (move,) = diff_snapshots(old, new)
    assert (move.kind, move.severity, move.direction) == (Kind.GENERATION_DEFAULTS, Severity.LOW, "update")
    assert move.summary == "max_length moved from config.json to generation_config.json (value 4096 kept)"
    assert "removed" not in move.summary and move.detail["moved_from"] == "config.json"


def test_a_key_dropped_from_config_but_kept_in_generation_config_is_one_move() -> None:
    old = make_snapshot({"config.json": {"model_type": "llama", "max_length": 4096}, "generation_config.json": {"max_length": 4096}})
    new = make_snapshot({"config.json": {"model_type": "llama"}, "generation_config.json": {"max_length": 4096}})
    (move,) = diff_snapshots(old, new)
    assert move.summary == "max_length removed from config.json, kept in generation_config.json (value 4096)"
    assert move.severity is Severity.LOW and move.direction == "update"


def test_a_different_value_is_not_a_move() -> None:
    old = make_snapshot({"config.json": {"model_type": "llama", "max_length": 4096}, "generation_config.json": {}})
    new = make_snapshot({"config.json": {"model_type": "llama"}, "generation_config.json": {"max_length": 2048}})
    assert {c.summary for c in diff_snapshots(old, new)} >= {"max_length removed (was 4096)"}


def test_a_template_moved_to_chat_template_jinja_with_the_same_prompts_is_one_move() -> None:
    old = make_snapshot({"tokenizer_config.json": {"eos_token": "</s>", "chat_template": GOOD}})
    new = make_snapshot({"tokenizer_config.json": {"eos_token": "</s>"}, "chat_template.jinja": GOOD + "\n"})
    (move,) = diff_snapshots(old, new)
    assert (move.kind, move.severity, move.direction) == (Kind.CHAT_TEMPLATE, Severity.LOW, "update")
    assert move.summary == "chat template moved from tokenizer_config.json to chat_template.jinja (rendered prompts unchanged)"
    # moved and changed: one record saying both
    (both,) = diff_snapshots(old, make_snapshot({"tokenizer_config.json": {"eos_token": "</s>"}, "chat_template.jinja": INJECTS}))
    assert both.summary.startswith("chat template moved from tokenizer_config.json to chat_template.jinja; rendered prompt")
    assert (both.severity, both.direction) == (Severity.HIGH, "update")


def test_a_template_that_now_injects_markup_is_an_update_not_a_fix() -> None:
    (change,) = diff_snapshots(make_snapshot({"chat_template.jinja": GOOD}), make_snapshot({"chat_template.jinja": INJECTS}))
    assert change.direction == "update" and "fix" not in change.summary
    assert change.summary == "rendered prompt for all 6 conversations changed"


def test_a_template_failing_before_and_after_is_at_most_info() -> None:
    other = BROKEN.replace("'no'", "'still no'")
    (change,) = diff_snapshots(make_snapshot({"chat_template.jinja": BROKEN}), make_snapshot({"chat_template.jinja": other}))
    assert change.severity is Severity.INFO and change.direction == "update"
    assert "fails to render before and after" in change.summary


def test_a_broken_template_is_a_hazard_its_repair_clears() -> None:
    (broke,) = diff_snapshots(make_snapshot({"chat_template.jinja": GOOD}), make_snapshot({"chat_template.jinja": BROKEN}))
    assert broke.direction == "hazard" and len(broke.detail["hazards"]) == 6
    (healed,) = diff_snapshots(make_snapshot({"chat_template.jinja": BROKEN}), make_snapshot({"chat_template.jinja": INJECTS}))
    assert healed.direction == "update" and set(healed.detail["clears"]) == set(broke.detail["hazards"])
    (gone,) = diff_snapshots(make_snapshot({"chat_template.jinja": GOOD}), make_snapshot({}))
    assert gone.direction == "hazard" and gone.detail["hazards"] == broke.detail["hazards"]
