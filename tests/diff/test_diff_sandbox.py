"""The chat template sandbox: renders like transformers, refuses hostile templates within limits."""

from __future__ import annotations

import time

import pytest

from hubwatch.diff import CONVERSATIONS, RenderLimits, render_chat_template

USER = [{"role": "user", "content": "hello"}]
SIMPLE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}{{ eos_token }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def test_renders_like_transformers() -> None:
    result = render_chat_template(SIMPLE, USER, special_tokens={"bos_token": "<s>", "eos_token": "</s>"})
    assert result.ok and result.error is None
    # trim_blocks drops the newline after a block tag; the one after an expression stays
    assert result.text == "<s><|user|>\nhello</s>\n<|assistant|>\n"
    no_prompt = render_chat_template(SIMPLE, USER, add_generation_prompt=False)
    assert no_prompt.text == "<|user|>\nhello\n"


def test_transformers_helpers() -> None:
    template = (
        "{{ strftime_now('%Y-%m-%d') }}|{{ tools | tojson }}|{% generation %}{{ messages[-1].content }}"
        "{% endgeneration %}|{% for t in tools %}{% break %}{% endfor %}"
    )
    result = render_chat_template(template, CONVERSATIONS[3])
    assert result.ok, result.error
    date, tools, body, _ = result.text.split("|", 3)
    assert date == "2026-01-01"  # frozen, so renders are reproducible
    assert '"name": "get_weather"' in tools
    assert body == '{"temperature": 21}'


def test_raise_exception_is_a_template_error() -> None:
    result = render_chat_template("{{ raise_exception('System role not supported') }}", USER)
    assert (result.ok, result.error_kind, result.error) == (False, "template_error", "System role not supported")


def test_syntax_error_is_a_result() -> None:
    result = render_chat_template("{% for m in messages %}", USER)
    assert not result.ok and result.error_kind == "syntax"


HOSTILE = {
    "class_walk": ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "security"),
    "globals": ("{{ cycler.__init__.__globals__.os.system('id') }}", "security"),
    "mutation": ("{% set _ = messages.append(1) %}", "security"),
    "nested_loops": ("{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}", "limit"),
    "huge_range": ("{% for i in range(10**9) %}x{% endfor %}", "limit"),
    "recursion": ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "limit"),
    "recursive_loop": ("{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", "limit"),
    "repeat": ("{{ 'x' * 10**9 }}", "limit"),
    "doubling": ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "limit"),
    "doubling_plus": ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", "limit"),
    "doubling_join": ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = [ns.s, ns.s]|join %}{% endfor %}", "limit"),
    "power": ("{{ 10 ** 100000000 }}", "limit"),
    "percent_width": ("{{ '%0999999999d' % 1 }}", "limit"),
    "format_width": ("{{ '{:>999999999}'.format(1) }}", "limit"),
    "center": ("{{ 'x' | center(999999999) }}", "limit"),
    "output": ("{% for i in range(10000) %}{{ 'y' * 100 }}{% endfor %}", "limit"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_templates_are_refused_quickly(name: str) -> None:
    template, kind = HOSTILE[name]
    started = time.monotonic()
    result = render_chat_template(template, USER)
    elapsed = time.monotonic() - started
    assert not result.ok, result.text and result.text[:100]
    assert result.error_kind == kind, result.error
    assert elapsed < 2.5


def test_unsafe_attribute_never_leaks() -> None:
    template = "{{ messages.__class__ }}{{ bos_token.__class__ }}{{ raise_exception.__globals__ }}"
    result = render_chat_template(template, USER, special_tokens={"bos_token": "x"})
    assert not (result.text or "").strip()  # refused attributes render as nothing at all


def test_deadline_stops_a_slow_template() -> None:
    limits = RenderLimits(timeout_s=0.3, max_iterations=10**9, max_range=10**6)
    slow = "{% for i in range(1000000) %}{% for j in range(1000000) %}{% endfor %}{% endfor %}"
    started = time.monotonic()
    result = render_chat_template(slow, USER, limits=limits)
    assert not result.ok and result.error_kind in ("limit", "timeout")
    assert "longer than 0.3s" in (result.error or "")
    assert time.monotonic() - started < 1.5


def test_template_size_limit() -> None:
    result = render_chat_template("x" * 600_000, USER)
    assert not result.ok and result.error_kind == "limit"


def test_real_templates_render_on_every_conversation(data_dir) -> None:  # type: ignore[no-untyped-def]
    template = (data_dir / "histories" / "openai__gpt-oss-20b" / "v5" / "chat_template.jinja").read_text()
    for conversation in CONVERSATIONS:
        result = render_chat_template(template, conversation)
        assert result.ok, (conversation.name, result.error)
        assert result.text and result.text.startswith("<|start|>system<|message|>")


def test_lipsum_is_bounded_before_it_runs() -> None:
    """lipsum makes all its paragraphs in one call: a million would fill memory past the deadline."""
    started = time.monotonic()
    result = render_chat_template("{{ lipsum(n=1000000) }}", USER)
    assert not result.ok and result.error_kind == "limit" and "lipsum" in (result.error or "")
    assert time.monotonic() - started < 1.0
    small = render_chat_template("{{ lipsum(2, false, 5, 10) }}", USER)
    assert small.ok and small.text and len(small.text.split("\n\n")) == 2
