"""Templates compiled in a child process: the same renders and findings, stopped at the deadline, replaced when gone."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hubwatch.diff.compile_worker import CompileWorker
from hubwatch.diff.compiled import CompiledCache
from hubwatch.diff.conversations import CONVERSATIONS, template_context
from hubwatch.diff.sandbox import RenderLimits, render_many

TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}
CONTEXTS = [template_context(c, TOKENS) for c in CONVERSATIONS]
SIMPLE = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{{ eos_token }}{% endfor %}"
BROKEN = {
    "syntax": "{% if %}",
    "unclosed": "{% for m in messages %}{{ m }}",
    "unknown tag": "{% frobnicate %}",
    "nested too deep for Python": "{% for x in y %}" * 90 + "x" + "{% endfor %}" * 90,
    "unsafe at render": "{{ messages.__class__.__mro__ }}",
    "raises": "{{ raise_exception('no system role') }}",
}
# Near the size limit and slow to compile (seconds of jinja2 code generation): only the deadline stops it.
SLOW = "{% if x %}a{% endif %}" * 21000


def _real_templates(data_dir: Path) -> list[str]:
    out = [p.read_text() for p in sorted((data_dir / "histories").glob("*/v*/chat_template.jinja"))]
    for path in sorted((data_dir / "histories").glob("*/v*/tokenizer_config.json")):
        template = json.loads(path.read_text()).get("chat_template")
        if isinstance(template, str):
            out.append(template)
    return list(dict.fromkeys(out))


@pytest.fixture
def worker() -> Iterator[CompileWorker]:
    w = CompileWorker()
    yield w
    w.close()


def test_child_compiles_real_templates_to_the_same_renders(worker: CompileWorker, data_dir: Path) -> None:
    templates = _real_templates(data_dir)
    assert len(templates) >= 5
    for template in [SIMPLE, *templates, *BROKEN.values()]:
        here = render_many(template, CONTEXTS, cache=CompiledCache(max_entries=0), compiler=None)
        child = render_many(template, CONTEXTS, cache=CompiledCache(max_entries=0), compiler=worker)
        assert child == here, template[:80]
    assert worker.started == 1 and worker.pid is not None  # one child served every compile


def test_failures_are_the_sandbox_findings(worker: CompileWorker) -> None:
    kinds = {name: render_many(t, CONTEXTS[:1], compiler=worker)[0] for name, t in BROKEN.items()}
    assert kinds["syntax"].error_kind == "syntax" and kinds["syntax"].error.startswith("line 1:")
    assert kinds["unknown tag"].error_kind == "syntax"
    assert kinds["nested too deep for Python"].error_kind == "error"
    assert kinds["unsafe at render"].error_kind == "security"
    assert kinds["raises"].error_kind == "template_error"


def test_a_compile_past_the_deadline_is_stopped_and_the_next_gets_a_new_child(worker: CompileWorker) -> None:
    render_many(SIMPLE, CONTEXTS[:1], compiler=worker)
    first = worker.pid
    before = os.times()
    result = render_many(SLOW, CONTEXTS[:1], RenderLimits(timeout_s=0.3), cache=CompiledCache(), compiler=worker)[0]
    spent = os.times()
    assert not result.ok and result.error_kind == "timeout"
    assert result.error == "render took longer than 0.3s"
    assert first is not None and worker.pid is None  # killed at the deadline, not left compiling
    with pytest.raises(ProcessLookupError):
        os.kill(first, 0)
    # The compile ran in the child: this process spent well under the seconds it takes.
    assert (spent.user + spent.system) - (before.user + before.system) < 1.0
    again = render_many(SIMPLE, CONTEXTS[:1], compiler=worker)[0]
    assert again.ok and worker.started == 2


def test_a_child_that_died_is_replaced(worker: CompileWorker) -> None:
    render_many(SIMPLE, CONTEXTS[:1], compiler=worker)
    pid = worker.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)  # reaped by the worker on the next compile
    result = render_many(SIMPLE + " ", CONTEXTS[:1], cache=CompiledCache(), compiler=worker)[0]
    assert result.ok
    assert worker.started == 2 and worker.pid not in (None, pid)


def test_without_a_child_templates_compile_here() -> None:
    worker = CompileWorker(command=[str(Path(sys.executable).parent / "no-such-python")])
    results = render_many(SIMPLE, CONTEXTS, cache=CompiledCache(), compiler=worker)
    assert results == render_many(SIMPLE, CONTEXTS, cache=CompiledCache(), compiler=None)
    assert worker.started == 0 and worker.pid is None


def test_a_child_that_does_not_speak_the_protocol_is_not_used() -> None:
    worker = CompileWorker(command=[sys.executable, "-c", "print('hello')"])
    results = render_many(SIMPLE, CONTEXTS[:1], cache=CompiledCache(), compiler=worker)
    assert results[0].ok and worker.started == 0
