"""Pin finder for Python source: reads the syntax tree (`ast`), never imports or runs the code."""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import replace

from hubwatch.pincheck.pins_text import Found, find_hf_urls, line_starts, locate

__all__ = ["LOADERS", "scan_python"]

# Call name → (positional index of the repo, keywords that may name the repo).
_REPO_KW = ("repo_id", "pretrained_model_name_or_path", "model_name_or_path", "model_id")
LOADERS: dict[str, tuple[int | None, tuple[str, ...]]] = {
    "from_pretrained": (0, _REPO_KW),
    "snapshot_download": (0, _REPO_KW),
    "hf_hub_download": (0, _REPO_KW),
    "hf_hub_url": (0, _REPO_KW),
    "model_info": (0, _REPO_KW),
    "list_repo_files": (0, _REPO_KW),
    "list_repo_tree": (0, _REPO_KW),
    "get_safetensors_metadata": (0, _REPO_KW),
    "SentenceTransformer": (0, ("model_name_or_path",)),
    "pipeline": (1, ("model",)),
}


class _Source:
    """The scanned text, to turn `ast` positions (line, UTF-8 byte column) into text offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = line_starts(text)

    def offset(self, line: int, col: int) -> int:
        start = self._starts[line - 1]
        end = self._starts[line] if line < len(self._starts) else len(self.text)
        return start + len(self.text[start:end].encode("utf-8")[:col].decode("utf-8", errors="replace"))

    def span(self, node: ast.expr, needle: str | None) -> tuple[int, int] | None:
        """Where `needle` is written inside `node`'s source (None when it is not written plainly)."""
        if node.end_lineno is None or node.end_col_offset is None:
            return None
        start = self.offset(node.lineno, node.col_offset)
        return locate(self.text, start, self.offset(node.end_lineno, node.end_col_offset), needle)


def _module_constants(tree: ast.Module) -> dict[str, ast.Constant]:
    """Module-level names bound exactly once in the whole file, to a string literal."""
    bound: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound[node.id] += 1
        elif isinstance(node, ast.arg):
            bound[node.arg] += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bound[name] += 2
    constants = {}
    for stmt in tree.body:
        target, value = None, None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            target, value = stmt.target.id, stmt.value
        if target and isinstance(value, ast.Constant) and isinstance(value.value, str) and bound[target] == 1:
            constants[target] = value
    return constants


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _literal_node(node: ast.expr | None, constants: dict[str, ast.Constant]) -> ast.Constant | None:
    """The string literal `node` is, or names (a module constant); None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    return None


def _literal(node: ast.expr | None, constants: dict[str, ast.Constant]) -> tuple[str | None, bool]:
    """(string value, known): a literal, or a module constant; anything else is not known."""
    found = _literal_node(node, constants)
    return (str(found.value), True) if found is not None else (None, False)


def _ignored_strings(tree: ast.Module) -> set[int]:
    """ids of string constants that are not plain values: docstrings and f-string parts."""
    ignored = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            ignored.add(id(node.value))
        elif isinstance(node, ast.JoinedStr):
            ignored.update(id(part) for part in ast.walk(node))
    return ignored


def _call_pin(node: ast.Call, constants: dict[str, ast.Constant], source: _Source) -> Found | None:
    name = _call_name(node.func)
    if name not in LOADERS:
        return None
    position, repo_keywords = LOADERS[name]
    keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg is not None}
    repo_type, _ = _literal(keywords.get("repo_type"), constants)
    if repo_type is not None and repo_type != "model":
        return None
    repo_node = next((keywords[k] for k in repo_keywords if k in keywords), None)
    if repo_node is None and position is not None and len(node.args) > position:
        repo_node = node.args[position]
    repo, known = _literal(repo_node, constants)
    if not known or repo is None or repo.count("/") != 1:
        return None  # a variable, an f-string or a local path: not a pin we can name
    if "revision" in keywords:
        revision, known_rev = _literal(keywords["revision"], constants)
        if isinstance(keywords["revision"], ast.Constant) and keywords["revision"].value is None:
            return Found(node.lineno, repo, None, "python")
        written = _literal_node(keywords["revision"], constants)
        span = source.span(written, revision) if written is not None else None
        return Found(node.lineno, repo, revision, "python", dynamic=not known_rev, span=span)
    splat = any(kw.arg is None for kw in node.keywords)
    return Found(node.lineno, repo, None, "python", dynamic=splat)


def scan_python(text: str) -> tuple[list[Found], str | None]:
    """Loader calls with a literal repo id (and their revision), and hf:// URLs in string literals."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        return [], f"not parseable as Python{f' (line {line})' if line else ''}"
    constants = _module_constants(tree)
    ignored = _ignored_strings(tree)
    source = _Source(text)
    found: list[Found] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            pin = _call_pin(node, constants, source)
            if pin is not None:
                found.append(pin)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "hf://" in node.value
            and id(node) not in ignored
        ):
            for f in find_hf_urls(node.value, node.lineno, "hf-url"):
                span = source.span(node, f"@{f.revision}") if f.revision else None
                found.append(replace(f, span=(span[0] + 1, span[1]) if span else None))
    return found, None
