"""Render a chat template safely: jinja2's ImmutableSandboxedEnvironment plus hard limits.

The environment is set up as transformers sets up chat templates (trim_blocks, lstrip_blocks,
loopcontrols, a `{% generation %}` tag, `raise_exception`, `strftime_now`, a `tojson` filter)
so the text rendered is the prompt the model sees. Remote templates are hostile, so on top of the
sandbox (which refuses `__class__`, `__globals__` and friends) every loop, call, operator, string
concatenation and filter is metered: a deadline, an iteration budget, a call budget, a recursion
depth, a cap on the size of every intermediate value and of the output. Rendering runs in a
worker thread joined with the same deadline. A template that fails or is refused is a result,
never an exception. `strftime_now` is frozen at a fixed date so renders are reproducible; `lipsum`
(one call that builds all its text) is bounded before it runs. Compiled templates are kept in a
bounded LRU keyed by the sha256 of their text (`compiled.CompiledCache`); each render still gets
its own metered environment and budget. A template not in the cache is compiled in a child
process (`compile_worker`), stopped when the render's deadline passes.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from functools import wraps
from types import CodeType
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from jinja2 import TemplateError, TemplateSyntaxError, nodes
from jinja2 import __version__ as _jinja2_version
from jinja2.exceptions import SecurityError
from jinja2.ext import Extension, loopcontrols
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import generate_lorem_ipsum
from jinja2.visitor import NodeTransformer

from .compile_worker import COMPILER, CompileFailed, CompileWorker
from .compiled import CompiledCache

__all__ = ["COMPILED_TEMPLATES", "RenderLimits", "RenderRefused", "RenderResult", "compile_here", "render_many"]

# The process's compiled templates (code objects only: no budget, no environment, no context).
COMPILED_TEMPLATES = CompiledCache()

FIXED_NOW = datetime(2026, 1, 1, 12, 0, 0)
_WIDE_FORMAT = re.compile(r"(%[^a-zA-Z%]*\d{6,})|(\{[^}]*\d{6,}[^}]*\})")


@dataclass(frozen=True)
class RenderLimits:
    """Hard limits on one render (the defaults are far above what real chat templates need)."""

    timeout_s: float = 2.0
    max_template_chars: int = 500_000
    max_output_chars: int = 200_000
    max_value_chars: int = 1_000_000
    max_iterations: int = 200_000
    max_calls: int = 500_000
    max_range: int = 10_000
    max_depth: int = 64


@dataclass(frozen=True)
class RenderResult:
    """The rendered prompt, or why there is none (`error_kind`: syntax, template_error, security,
    limit, timeout, error)."""

    ok: bool
    text: str | None = None
    error: str | None = None
    error_kind: str | None = None

    @property
    def outcome(self) -> str:
        return "ok" if self.ok else f"{self.error_kind}: {self.error}"


class RenderRefused(Exception):
    """A template went past a render limit."""


@dataclass
class _Budget:
    limits: RenderLimits
    deadline: float
    iterations: int = 0
    calls: int = 0
    depth: int = 0
    log: list[str] = field(default_factory=list)

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise RenderRefused(f"render took longer than {self.limits.timeout_s:g}s")

    def size(self, value: Any, what: str) -> Any:
        if isinstance(value, (str, list, tuple, dict, bytes)) and len(value) > self.limits.max_value_chars:
            raise RenderRefused(f"{what} produced a value of {len(value)} items (limit {self.limits.max_value_chars})")
        return value


class _GenerationTag(Extension):
    """transformers' `{% generation %}…{% endgeneration %}` (marks assistant text): renders its body."""

    tags = {"generation"}

    def parse(self, parser: Parser) -> list[nodes.Node]:
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


class _Meter(NodeTransformer):
    """Route every for-loop iterable and every `~` concatenation through the environment's meters."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Call(nodes.EnvironmentAttribute("hw_iter"), [node.iter], [], None, None, lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        parts = nodes.Tuple(node.nodes, "load", lineno=node.lineno)
        return nodes.Call(nodes.EnvironmentAttribute("hw_concat"), [parts], [], None, None, lineno=node.lineno)


class GuardedEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox with meters on loops, calls, operators, concatenation and filters."""

    intercepted_binops = frozenset(["*", "**", "+", "%", "//"])

    def __init__(self, budget: _Budget) -> None:
        super().__init__(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols, _GenerationTag])
        self.budget = budget
        self.filters = {name: self._metered(f) for name, f in self.filters.items()}
        self.filters["tojson"] = self._metered(_tojson)
        self.globals["raise_exception"] = _raise_exception
        self.globals["strftime_now"] = _strftime_now
        self.globals["range"] = self._range
        self.globals["lipsum"] = self._lipsum

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        result = _Meter().visit(tree)
        assert isinstance(result, nodes.Template)
        return result

    def _metered(self, func: Callable[..., Any]) -> Callable[..., Any]:
        budget = self.budget

        @wraps(func)
        def metered(*args: Any, **kwargs: Any) -> Any:
            budget.tick()
            _check_args(budget, args, kwargs)
            if func.__name__ == "do_format" and any(isinstance(a, str) and _WIDE_FORMAT.search(a) for a in args):
                raise RenderRefused("format width too large")
            return budget.size(func(*args, **kwargs), f"filter {func.__name__}")

        return metered

    def _range(self, *args: int) -> Iterable[int]:
        numbers = range(*args)
        if len(numbers) > self.budget.limits.max_range:
            raise RenderRefused(f"range of {len(numbers)} items (limit {self.budget.limits.max_range})")
        return numbers

    def _lipsum(self, n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:  # noqa: A002
        """jinja2's lipsum with its paragraph count and length bounded (one call makes all of it)."""
        if not (isinstance(n, int) and isinstance(max, int) and 0 <= n <= 100 and 0 <= max <= 1000):
            raise RenderRefused("lipsum asked for more than 100 paragraphs of 1000 words")
        return str(generate_lorem_ipsum(n=n, html=html, min=min, max=max))

    def hw_iter(self, iterable: Any) -> Iterator[Any]:
        budget = self.budget
        for item in iterable:
            budget.iterations += 1
            if budget.iterations > budget.limits.max_iterations:
                raise RenderRefused(f"more than {budget.limits.max_iterations} loop iterations")
            budget.tick()
            yield item

    def hw_concat(self, parts: Sequence[Any]) -> str:
        texts = [str(p) for p in parts]
        if sum(len(t) for t in texts) > self.budget.limits.max_value_chars:
            raise RenderRefused("string concatenation too large")
        return "".join(texts)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        budget = __self.budget
        budget.calls += 1
        if budget.calls > budget.limits.max_calls:
            raise RenderRefused(f"more than {budget.limits.max_calls} calls")
        budget.tick()
        _check_args(budget, args, kwargs)
        budget.depth += 1
        try:
            if budget.depth > budget.limits.max_depth:
                raise RenderRefused(f"calls nested deeper than {budget.limits.max_depth}")
            result = super().call(__context, __obj, *args, **kwargs)
        finally:
            budget.depth -= 1
        return budget.size(result, "a call")

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        owner = getattr(value, "__self__", None)
        if isinstance(owner, str) and getattr(value, "__name__", "") in ("format", "format_map"):
            if _WIDE_FORMAT.search(owner):
                raise RenderRefused("format width too large")
        return super().wrap_str_format(value)

    def getattr(self, obj: Any, attribute: str) -> Any:
        self.budget.tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        self.budget.tick()
        return super().getitem(obj, argument)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        self.budget.tick()
        cap = self.budget.limits.max_value_chars
        ints = all(isinstance(v, int) for v in (left, right))
        if operator == "*":
            seq, n = (left, right) if isinstance(right, int) else (right, left)
            if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * max(n, 0) > cap:
                raise RenderRefused("repetition too large")
            if ints and abs(left).bit_length() + abs(right).bit_length() > 4096:
                raise RenderRefused("number too large")
        elif operator == "**":
            if ints and (right > 4096 or abs(left).bit_length() * max(right, 0) > 4096):
                raise RenderRefused("power too large")
        elif operator == "+" and isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
            if len(left) + len(right) > cap:
                raise RenderRefused("concatenation too large")
        elif operator == "%" and isinstance(left, str) and _WIDE_FORMAT.search(left):
            raise RenderRefused("format width too large")
        return self.budget.size(super().call_binop(context, operator, left, right), f"operator {operator}")


def _check_args(budget: _Budget, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > budget.limits.max_value_chars:
            raise RenderRefused(f"argument {value} too large")


def _raise_exception(message: str) -> None:
    raise TemplateError(message)


def _strftime_now(fmt: str) -> str:
    return FIXED_NOW.strftime(str(fmt)[:200])


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None,
            separators: Any = None, sort_keys: bool = False) -> str:  # fmt: skip
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _failure(exc: BaseException) -> RenderResult:
    message = str(exc)[:300] or type(exc).__name__
    if isinstance(exc, TemplateSyntaxError):
        return RenderResult(False, error=f"line {exc.lineno}: {message}", error_kind="syntax")
    if isinstance(exc, SecurityError):
        return RenderResult(False, error=message, error_kind="security")
    if isinstance(exc, RenderRefused):
        return RenderResult(False, error=message, error_kind="limit")
    if isinstance(exc, (RecursionError, MemoryError)):
        return RenderResult(False, error=f"{type(exc).__name__}: {message}", error_kind="limit")
    if isinstance(exc, TemplateError):
        return RenderResult(False, error=message, error_kind="template_error")
    return RenderResult(False, error=f"{type(exc).__name__}: {message}", error_kind="error")


# Everything that changes the code a template compiles to: the environment's class, its operator
# interception and jinja2's version (the options and extensions are fixed in GuardedEnvironment).
_ENV_KEY = (f"{__name__}.GuardedEnvironment;binops={','.join(sorted(GuardedEnvironment.intercepted_binops))};"
            f"jinja2={_jinja2_version}")


_COMPILING: list[GuardedEnvironment] = []  # the environment `compile_here` uses when given none, made once


def compile_here(source: str, env: GuardedEnvironment | None = None) -> CodeType:
    """The code of `source` as the sandbox compiles it, in this process (the compile worker's child
    runs this), by `env` (when None, one environment kept for compiling: compiling reads none of its
    budget); a template that does not compile raises CompileFailed with the result to report."""
    if env is None:
        if not _COMPILING:
            _COMPILING.append(GuardedEnvironment(_Budget(RenderLimits(), deadline=float("inf"))))
        env = _COMPILING[0]
    try:
        code = env.compile(source)
    except Exception as exc:  # noqa: BLE001 - every failure (RecursionError, MemoryError too) is a result
        failure = _failure(exc)
        raise CompileFailed(failure.error or "", failure.error_kind or "error") from None
    assert isinstance(code, CodeType)
    return code


def _render_all(template: str, contexts: Sequence[Mapping[str, Any]], budget: _Budget, out: list[RenderResult],
                cache: CompiledCache, compiler: CompileWorker | None) -> None:
    limits = budget.limits
    try:
        env = GuardedEnvironment(budget)

        def here(source: str) -> CodeType:
            return compile_here(source, env)

        compile_source = here if compiler is None else lambda source: compiler.compile(source, budget.deadline, here)
        code = cache.get(template, _ENV_KEY, compile_source)
        compiled = env.template_class.from_code(env, code, env.make_globals(None), None)
    except CompileFailed as exc:  # a template that does not compile is a finding; a timeout reads as the render's
        error = f"render took longer than {limits.timeout_s:g}s" if exc.error_kind == "timeout" else exc.error
        out.extend([RenderResult(False, error=error, error_kind=exc.error_kind)] * len(contexts))
        return
    except Exception as exc:  # noqa: BLE001 - binding the code: reported like a compile failure
        out.extend([_failure(exc)] * len(contexts))
        return
    for context in contexts:
        budget.iterations = budget.calls = budget.depth = 0
        chunks: list[str] = []
        size = 0
        try:
            for chunk in compiled.generate(**context):
                size += len(chunk)
                if size > limits.max_output_chars:
                    raise RenderRefused(f"output longer than {limits.max_output_chars} characters")
                budget.tick()
                chunks.append(chunk)
            out.append(RenderResult(True, text="".join(chunks)))
        except Exception as exc:  # noqa: BLE001 - every failure (RecursionError, MemoryError too) becomes a result
            out.append(_failure(exc))


def render_many(template: str, contexts: Sequence[Mapping[str, Any]], limits: RenderLimits | None = None,
                cache: CompiledCache | None = None, compiler: CompileWorker | None = COMPILER) -> list[RenderResult]:
    """Render one template on several contexts within one deadline (in a worker thread).

    The compiled template comes from `cache` (default: `COMPILED_TEMPLATES`) when the same text was
    compiled before; the limits apply to this render alone either way. A template not in the cache
    is compiled by `compiler` (default `compile_worker.COMPILER`: a child process, stopped at the
    deadline; None: in this process).
    """
    cache = COMPILED_TEMPLATES if cache is None else cache
    limits = limits or RenderLimits()
    if not isinstance(template, str):
        return [RenderResult(False, error="template is not a string", error_kind="error")] * len(contexts)
    if len(template) > limits.max_template_chars:
        refused = RenderResult(False, error=f"template longer than {limits.max_template_chars} characters", error_kind="limit")
        return [refused] * len(contexts)
    if compiler is not None:
        compiler.warm()  # a first child starts here, outside this render's deadline
    budget = _Budget(limits, deadline=time.monotonic() + limits.timeout_s)
    out: list[RenderResult] = []
    thread = threading.Thread(target=_render_all, args=(template, contexts, budget, out, cache, compiler), daemon=True,
                              name="hubwatch-render")
    thread.start()
    thread.join(limits.timeout_s + 0.5)
    if thread.is_alive():
        budget.deadline = 0.0  # the worker stops at its next meter
        done = list(out)
        timed_out = RenderResult(False, error=f"render took longer than {limits.timeout_s:g}s", error_kind="timeout")
        return done + [timed_out] * (len(contexts) - len(done))
    return out
