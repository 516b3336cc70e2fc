"""Chat template diffs inside diff_snapshots: locations, precedence, rendered diffs, failures."""

from __future__ import annotations

from diff_histories import make_snapshot
from hubwatch.domain.records import Kind, Severity
from hubwatch.diff import diff_snapshots

GOOD = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
FIXED = GOOD.replace("{% endfor %}", "{{ eos_token }}{% endfor %}")
PICKY = "{% if messages|length > 2 %}{{ raise_exception('too long') }}{% endif %}" + GOOD


def tc(template: object, **extra: object) -> dict[str, object]:
    return {"tokenizer_config.json": {"eos_token": "</s>", "chat_template": template, **extra}}


def test_rendered_prompt_change_is_high_fix_with_rendered_diff() -> None:
    (change,) = diff_snapshots(make_snapshot(tc(GOOD)), make_snapshot(tc(FIXED)))
    assert (change.kind, change.severity, change.direction) == (Kind.CHAT_TEMPLATE, Severity.HIGH, "update")
    assert change.summary == "rendered prompt for all 6 conversations changed"
    assert change.path == "tokenizer_config.json:chat_template"
    diff = change.detail["rendered_diff"]["multi_turn"]["diff"]
    assert "+<user>Hi!</s><assistant>Hello! How can I help?</s><user>Tell me a joke.</s><assistant>" in diff
    assert change.detail["text_diff"].startswith("--- old/tokenizer_config.json")


def test_template_that_stops_rendering_is_a_risk() -> None:
    (change,) = diff_snapshots(make_snapshot(tc(GOOD)), make_snapshot(tc(PICKY)))
    assert (change.severity, change.direction) == (Severity.HIGH, "hazard")
    assert change.summary == "chat template no longer renders for 4 of 6 conversations (multi-turn conversations, tool calls, …)"
    assert change.detail["rendered_diff"]["multi_turn"]["new"] == "template_error: too long"


def test_hostile_new_template_is_a_finding() -> None:
    hostile = "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}"
    (change,) = diff_snapshots(make_snapshot(tc(GOOD)), make_snapshot(tc(hostile)))
    assert change.direction == "hazard" and "no longer renders" in change.summary


def test_whitespace_only_template_change_is_low() -> None:
    spaced = GOOD.replace("{% for m in messages %}", "{%- for m in messages -%}")
    (change,) = diff_snapshots(make_snapshot(tc(GOOD)), make_snapshot(tc(spaced)))
    assert change.severity is Severity.LOW and "rendered prompts unchanged" in change.summary


def test_named_templates_and_additional_folder() -> None:
    named = [{"name": "default", "template": GOOD}, {"name": "tool_use", "template": GOOD}]
    renamed = [{"name": "default", "template": GOOD}, {"name": "tool_use", "template": FIXED}]
    (change,) = diff_snapshots(make_snapshot(tc(named)), make_snapshot(tc(renamed)))
    assert change.path == "tokenizer_config.json:chat_template.tool_use"
    assert change.summary.startswith("rendered prompt (tool_use)")
    # a file in additional_chat_templates/ takes precedence over the named entry
    extra = {**tc(named), "additional_chat_templates/tool_use.jinja": FIXED}
    found = {(c.severity.value, c.path) for c in diff_snapshots(make_snapshot(tc(named)), make_snapshot(extra))}
    assert ("high", "additional_chat_templates/tool_use.jinja") in found


def test_jinja_file_shadows_tokenizer_config() -> None:
    old = make_snapshot({**tc(GOOD), "chat_template.jinja": FIXED})
    new = make_snapshot({**tc(PICKY), "chat_template.jinja": FIXED})
    (change,) = diff_snapshots(old, new)
    assert change.severity is Severity.INFO and "not in effect; chat_template.jinja is used" in change.summary


def test_template_added_and_removed() -> None:
    bare = make_snapshot({"tokenizer_config.json": {"eos_token": "</s>"}})
    (added,) = diff_snapshots(bare, make_snapshot(tc(GOOD)))
    assert (added.severity, added.direction, added.summary) == (Severity.MEDIUM, "update", "chat template added (tokenizer_config.json)")
    (removed,) = diff_snapshots(make_snapshot(tc(GOOD)), bare)
    assert (removed.severity, removed.direction, removed.summary) == (Severity.HIGH, "hazard", "chat template removed")


def test_special_token_change_rerenders_the_same_template() -> None:
    template = "{{ bos_token }}" + GOOD
    old = make_snapshot(tc(template, bos_token="<s>"))
    new = make_snapshot(tc(template, bos_token="<|begin|>"))
    found = {c.kind for c in diff_snapshots(old, new)}
    assert found == {Kind.SPECIAL_TOKENS, Kind.CHAT_TEMPLATE}
