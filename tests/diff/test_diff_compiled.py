"""Compiled chat templates cached by content hash: compiled once, rendered the same, limits per render."""

from __future__ import annotations

import threading
from types import CodeType

from hubwatch.diff.compiled import CompiledCache
from hubwatch.diff.conversations import CONVERSATIONS, template_context
from hubwatch.diff.sandbox import RenderLimits, RenderResult, render_many

SIMPLE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}{{ eos_token }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
LOOP = "{% for i in range(10000) %}{% for j in range(10000) %}{{ messages | length }}{% endfor %}{% endfor %}"
TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}
CONTEXTS = [template_context(c, TOKENS) for c in CONVERSATIONS]


def test_same_template_compiles_once_and_renders_the_same() -> None:
    cache = CompiledCache()
    uncached = render_many(SIMPLE, CONTEXTS, cache=CompiledCache(max_entries=0))
    first = render_many(SIMPLE, CONTEXTS, cache=cache)
    second = render_many(SIMPLE, CONTEXTS, cache=cache)
    assert first == second == uncached
    assert all(r.ok for r in first)
    info = cache.info()
    assert (info.compiles, info.hits, info.entries, info.chars) == (1, 1, 1, len(SIMPLE))


def test_another_text_compiles_again() -> None:
    cache = CompiledCache()
    render_many(SIMPLE, CONTEXTS[:1], cache=cache)
    render_many(SIMPLE + " ", CONTEXTS[:1], cache=cache)
    assert cache.info().compiles == 2


def test_limits_apply_to_every_render_of_a_cached_template() -> None:
    cache = CompiledCache()
    iterations = RenderLimits(max_iterations=1_000)
    for _ in range(2):
        (result,) = render_many(LOOP, CONTEXTS[:1], iterations, cache=cache)
        assert result.error_kind == "limit" and "loop iterations" in (result.error or "")
    timeout = RenderLimits(timeout_s=0.2, max_iterations=10**9, max_output_chars=10**9, max_value_chars=10**9)
    for _ in range(2):
        (result,) = render_many(LOOP, CONTEXTS[:1], timeout, cache=cache)
        assert not result.ok and result.error_kind in ("limit", "timeout")
    output = RenderLimits(max_output_chars=100)
    (result,) = render_many(LOOP, CONTEXTS[:1], output, cache=cache)
    assert result.error_kind == "limit" and "output longer" in (result.error or "")
    assert cache.info().compiles == 1 and cache.info().hits == 4


def test_a_template_that_does_not_compile_is_not_cached() -> None:
    cache = CompiledCache()
    for _ in range(2):
        (result,) = render_many("{% for %}", CONTEXTS[:1], cache=cache)
        assert result.error_kind == "syntax"
    assert cache.info().entries == 0 and cache.info().compiles == 0


def test_bounded_in_entries_and_characters() -> None:
    def compile_source(source: str) -> CodeType:
        return compile(repr(source), "<t>", "eval")

    cache = CompiledCache(max_entries=3, max_chars=10)
    for text in ("aa", "bb", "cc", "dd"):
        cache.get(text, "env", compile_source)
    assert cache.info().entries == 3
    cache.get("b" * 9, "env", compile_source)  # 9 + 2 + 2 > 10: the oldest go first
    info = cache.info()
    assert info.entries == 1 and info.chars == 9
    cache.get("x" * 11, "env", compile_source)  # larger than the whole cache: compiled, not kept
    assert cache.info().entries == 1
    cache.get("b" * 9, "other env", compile_source)  # the environment is part of the key
    assert cache.info().compiles == 7


def test_least_recently_used_goes_first() -> None:
    cache = CompiledCache(max_entries=2)
    compile_source = lambda s: compile("0", "<t>", "eval")  # noqa: E731
    cache.get("a", "e", compile_source)
    cache.get("b", "e", compile_source)
    cache.get("a", "e", compile_source)  # a is now the most recent
    cache.get("c", "e", compile_source)  # b goes
    before = cache.info().compiles
    cache.get("a", "e", compile_source)
    assert cache.info().compiles == before
    cache.get("b", "e", compile_source)
    assert cache.info().compiles == before + 1


def test_renders_from_many_threads() -> None:
    cache = CompiledCache(max_entries=4)
    templates = [SIMPLE + "x" * i for i in range(8)]
    expected = {t: render_many(t, CONTEXTS, cache=CompiledCache(max_entries=0)) for t in templates}
    failures: list[str] = []

    def worker(n: int) -> None:
        for i in range(40):
            t = templates[(n + i) % len(templates)]
            got: list[RenderResult] = render_many(t, CONTEXTS, cache=cache)
            if got != expected[t]:
                failures.append(t)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    info = cache.info()
    assert info.entries <= 4 and info.hits + info.compiles == 8 * 40
