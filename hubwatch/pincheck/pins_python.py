"""Pin finder for Python source: reads the syntax tree (`ast`), never imports or runs the code."""

from __future__ import annotations

import ast
from collections import Counter

from hubwatch.pincheck.pins_text import Found, find_hf_urls

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


def _module_constants(tree: ast.Module) -> dict[str, str]:
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
            constants[target] = value.value
    return constants


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _literal(node: ast.expr | None, constants: dict[str, str]) -> tuple[str | None, bool]:
    """(string value, known): a literal, or a module constant; anything else is not known."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, True
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id], True
    return None, False


def _ignored_strings(tree: ast.Module) -> set[int]:
    """ids of string constants that are not plain values: docstrings and f-string parts."""
    ignored = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            ignored.add(id(node.value))
        elif isinstance(node, ast.JoinedStr):
            ignored.update(id(part) for part in ast.walk(node))
    return ignored


def _call_pin(node: ast.Call, constants: dict[str, str]) -> Found | None:
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
        return Found(node.lineno, repo, revision, "python", dynamic=not known_rev)
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
    found: list[Found] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            pin = _call_pin(node, constants)
            if pin is not None:
                found.append(pin)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "hf://" in node.value
            and id(node) not in ignored
        ):
            found += find_hf_urls(node.value, node.lineno, "hf-url")
    return found, None
