"""What a Python expression's string value is, read from the file's syntax tree alone (nothing imported or run).

A name bound exactly once, a dict entry, a dataclass or class field default, an argparse default, an
attribute set in one place, `os.getenv(NAME, default)`, a parameter's string default (the value a call
that passes nothing gets, as a getenv default is the value when the variable is unset), `+` and
f-strings are followed; anything else (a parameter without a string default, a call, a name bound
twice) is computed at run time and reads as `DYN`.
"""

from __future__ import annotations

import ast
from collections import Counter, defaultdict
from typing import Callable

from hubwatch.pincheck.pins_text import Value

__all__ = ["NONE", "Resolver", "field_default"]

NONE = Value()  # stands for the literal None (no revision); distinct from "" by identity
_MAX_DEPTH = 24


def _is_str(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _dest(call: ast.Call) -> str | None:
    """The attribute an `add_argument(...)` call sets (`dest=`, else its first long option)."""
    for kw in call.keywords:
        if kw.arg == "dest" and _is_str(kw.value):
            return str(kw.value.value)  # type: ignore[attr-defined]
    flags = [str(a.value) for a in call.args if _is_str(a)]  # type: ignore[attr-defined]
    long = next((f for f in flags if f.startswith("--")), None)
    name = long or next((f for f in flags if not f.startswith("-")), None)
    return name.lstrip("-").replace("-", "_") if name else None


def field_default(value: ast.expr) -> ast.expr | None:
    """`field(default=X)` / `Field(X)` / `Field(default=X)`: X; a plain value is its own default."""
    if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)):
        name = value.func.id if isinstance(value.func, ast.Name) else value.func.attr
        if name in ("field", "Field"):
            for kw in value.keywords:
                if kw.arg == "default":
                    return kw.value
            return value.args[0] if name == "Field" and value.args else None
    return value


class Resolver:
    """Resolves expressions of one module to string values (with where each piece is written)."""

    def __init__(self, tree: ast.Module, span: Callable[[ast.Constant], tuple[int, int] | None]) -> None:
        self._span = span
        self.bound: Counter[str] = Counter()
        self.values: dict[str, ast.expr] = {}
        self.attrs: defaultdict[str, list[ast.expr | None]] = defaultdict(list)
        self.fields: list[tuple[ast.ClassDef, dict[str, ast.expr]]] = []
        self._read: set[int] = set()  # attribute stores read as plain assignments
        self._defaulted: set[int] = set()  # parameters with a string default, bound once by it
        for node in ast.walk(tree):  # breadth first: an assignment comes before its target
            self._index(node)

    def _index(self, node: ast.AST) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            self.bound[node.id] += 1
        elif isinstance(node, ast.arguments):
            self._defaults(node)
        elif isinstance(node, ast.arg):
            # A parameter is computed at run time, unless it has a string default (read as that value).
            self.bound[node.arg] += 1 if id(node) in self._defaulted else 2
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                self.bound[name] += 2
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                self.bound[(alias.asname or alias.name).split(".")[0]] += 2
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and id(node) not in self._read:
            self.attrs[node.attr].append(None)  # set somewhere we do not read as a plain assignment
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            self._bind(node.targets[0], node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._bind(node.target, node.value)
        elif isinstance(node, ast.ClassDef):
            fields: dict[str, ast.expr] = {}
            for stmt in node.body:
                target, value = None, None
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                    target, value = stmt.target.id, field_default(stmt.value)
                elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    target, value = stmt.targets[0].id, stmt.value
                if target is not None:
                    self.attrs[target].append(value)
                    if value is not None:
                        fields[target] = value
            self.fields.append((node, fields))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            dest = _dest(node)
            if dest is not None:
                default = next((kw.value for kw in node.keywords if kw.arg == "default"), None)
                self.attrs[dest].append(default)

    def _defaults(self, node: ast.arguments) -> None:
        """Bind each parameter with a string default to it (walked before the parameters themselves)."""
        positional = [*node.posonlyargs, *node.args]
        pairs = [*zip(positional[len(positional) - len(node.defaults):], node.defaults),
                 *zip(node.kwonlyargs, node.kw_defaults)]
        for arg, default in pairs:
            if default is not None and _is_str(default):
                self._defaulted.add(id(arg))
                self.values[arg.arg] = default

    def _bind(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.values[target.id] = value
        elif isinstance(target, ast.Attribute):
            self.attrs[target.attr].append(value)
            self._read.add(id(target))

    def named(self, name: str) -> ast.expr | None:
        """The one expression a name is bound to, when it is bound exactly once."""
        return self.values.get(name) if self.bound[name] == 1 else None

    def node(self, expr: ast.expr | None, depth: int = 0) -> ast.expr | None:
        """The expression `expr` stands for: names, dict entries and attributes followed (or None)."""
        if expr is None or depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            return self.node(self.named(expr.id), depth + 1)
        if isinstance(expr, ast.Subscript) and _is_str(expr.slice):
            return self._entry(self.node(expr.value, depth + 1), str(expr.slice.value), depth)  # type: ignore[attr-defined]
        if isinstance(expr, ast.Attribute):
            found = self.attrs.get(expr.attr, [])
            known = [f for f in found if f is not None]
            if not found or len(known) != len(found) or any(ast.dump(f) != ast.dump(known[0]) for f in known):
                return None  # never set, set where we cannot read it, or set to different values
            return self.node(known[0], depth + 1)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "get" \
                and expr.args and _is_str(expr.args[0]):
            if self._environ(expr.func.value):
                return self.node(expr.args[1], depth + 1) if len(expr.args) > 1 else None
            entry = self._entry(self.node(expr.func.value, depth + 1), str(expr.args[0].value), depth)  # type: ignore[attr-defined]
            return entry if entry is not None else (self.node(expr.args[1], depth + 1) if len(expr.args) > 1 else None)
        if isinstance(expr, ast.Call) and self._getenv(expr.func) and len(expr.args) > 1:
            return self.node(expr.args[1], depth + 1)  # os.getenv(NAME, default): the default, unless overridden
        return expr

    def _entry(self, mapping: ast.expr | None, key: str, depth: int) -> ast.expr | None:
        if isinstance(mapping, ast.Dict):
            for k, v in zip(mapping.keys, mapping.values):
                if _is_str(k) and k.value == key:  # type: ignore[union-attr]
                    return self.node(v, depth + 1)
        if isinstance(mapping, ast.Call) and isinstance(mapping.func, ast.Name) and mapping.func.id == "dict":
            for kw in mapping.keywords:
                if kw.arg == key:
                    return self.node(kw.value, depth + 1)
        return None

    @staticmethod
    def _environ(expr: ast.expr) -> bool:
        return isinstance(expr, ast.Attribute) and expr.attr == "environ"

    @staticmethod
    def _getenv(func: ast.expr) -> bool:
        return isinstance(func, ast.Attribute) and func.attr == "getenv"

    def value(self, expr: ast.expr | None, depth: int = 0) -> Value | None:
        """The string `expr` is (NONE for None); None when `expr` is missing; DYN parts where computed."""
        if expr is None:
            return None
        found = self.node(expr, depth)
        if found is None or depth > _MAX_DEPTH:
            return Value.dynamic()
        if isinstance(found, ast.Constant):
            if found.value is None:
                return NONE
            if isinstance(found.value, str):
                span = self._span(found)
                if span is None:
                    return Value.of(found.value)
                return Value.of(found.value, span[0]) if span[1] - span[0] == len(found.value) else Value.of(found.value)
            return Value.dynamic()
        if isinstance(found, ast.JoinedStr):
            out = Value()
            for part in found.values:
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    out = out + Value.of(part.value)  # inside an f-string: not rewritten in place
                elif isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None:
                    inner = self.value(part.value, depth + 1)
                    out = out + (inner if inner is not None and inner is not NONE else Value.dynamic())
                else:
                    out = out + Value.dynamic()
            return out
        if isinstance(found, ast.BinOp) and isinstance(found.op, ast.Add):
            left, right = self.value(found.left, depth + 1), self.value(found.right, depth + 1)
            if left is None or right is None or left is NONE or right is NONE:
                return Value.dynamic()
            return left + right
        return Value.dynamic()
