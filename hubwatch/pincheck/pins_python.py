"""Pin finder for Python source: reads the syntax tree (`ast`), never imports or runs the code."""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from hubwatch.pincheck.pins_pyvalues import NONE, Resolver, field_default
from hubwatch.pincheck.pins_text import (
    AMBIGUOUS, Found, Value, dataset_keys, find_hf_urls, find_hub_urls, line_starts, locate, looks_like_dataset,
    looks_like_repo, pair_keys,
)

__all__ = ["LOADERS", "Loader", "scan_python"]


@dataclass(frozen=True)
class Loader:
    """Where a call names a repo (a position, or keywords) and which keyword holds its revision."""

    position: int | None
    keywords: tuple[str, ...]
    revision: str = "revision"
    follows: bool = False  # with no repo of its own, the repo is the call's first one (vLLM's tokenizer)


_REPO_KW = ("repo_id", "pretrained_model_name_or_path", "model_name_or_path", "model_id")
_HUB = (Loader(0, _REPO_KW),)
_VLLM = (Loader(0, ("model",)), Loader(None, ("tokenizer",), "tokenizer_revision", follows=True))
LOADERS: dict[str, tuple[Loader, ...]] = {
    "from_pretrained": _HUB, "snapshot_download": _HUB, "hf_hub_download": _HUB, "hf_hub_url": _HUB,
    "model_info": _HUB, "list_repo_files": _HUB, "list_repo_tree": _HUB, "get_safetensors_metadata": _HUB,
    "SentenceTransformer": (Loader(0, ("model_name_or_path",)),),
    "CrossEncoder": (Loader(0, ("model_name", "model_name_or_path")),),
    "pipeline": (Loader(1, ("model",)),),
    "LLM": _VLLM, "EngineArgs": _VLLM, "AsyncEngineArgs": _VLLM,
    "load_dataset": (Loader(0, ("path",)),),  # datasets.load_dataset("org/name", "config", revision=…)
}
_DATASET_CALLS = frozenset({"load_dataset"})
_PEFT = (Loader(1, ("model_id",)),)  # PeftModel.from_pretrained(base_model, "adapter/repo", revision=…)
_NESTED_REVISION = ("revision", "commit", "sha", "model_revision")


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


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _ignored_strings(tree: ast.Module) -> set[int]:
    """ids of string constants that are not plain values: docstrings and f-string parts."""
    ignored = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            ignored.add(id(node.value))
        elif isinstance(node, ast.JoinedStr):
            ignored.update(id(part) for part in ast.walk(node))
    return ignored


def _revision(value: Value | None, splat: bool) -> tuple[str | None, bool, tuple[int, int] | None]:
    """(revision, computed at run time, span) for a revision keyword's value (None: not given)."""
    if value is None:
        return None, splat, None
    if value is NONE:
        return None, False, None
    if value.is_dynamic or not value.text:
        return None, True, None
    return value.text, False, value.span


def _aliases(tree: ast.Module) -> dict[str, str]:
    """`from datasets import load_dataset as ld` (and the hub client's loaders): alias -> loader name."""
    return {a.asname: a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and (node.module or "").split(".")[0] in ("datasets", "huggingface_hub")
            for a in node.names if a.asname and a.name in LOADERS}


def _specs(node: ast.Call, aliases: dict[str, str] | None = None) -> tuple[Loader, ...] | None:
    name = _call_name(node.func)
    if aliases and isinstance(node.func, ast.Name) and name in aliases:
        name = aliases[name]
    if name == "from_pretrained" and isinstance(node.func, ast.Attribute):
        receiver = _call_name(node.func.value)
        if receiver is not None and receiver.startswith(("PeftModel", "PeftMixedModel")):
            return _PEFT
    return LOADERS.get(name) if name else None


def _call_pins(node: ast.Call, r: Resolver, aliases: dict[str, str] | None = None) -> list[Found]:
    specs = _specs(node, aliases)
    if specs is None:
        return []
    keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg is not None}
    splat = any(kw.arg is None for kw in node.keywords)
    repo_type = r.value(keywords.get("repo_type"))
    name = _call_name(node.func)
    kind = "dataset" if (aliases or {}).get(name or "", name) in _DATASET_CALLS else "model"
    if repo_type is not None and repo_type is not NONE and repo_type.text != "model":
        if repo_type.text != "dataset" or kind == "dataset":
            return []  # a space, a computed repo type, or a repo_type keyword load_dataset does not take
        kind = "dataset"
    found: list[Found] = []
    first: Value | None = None
    for k, spec in enumerate(specs):
        repo_node = next((keywords[w] for w in spec.keywords if w in keywords), None)
        if repo_node is None and spec.position is not None and len(node.args) > spec.position:
            repo_node = node.args[spec.position]
        if repo_node is None and not (spec.follows and spec.revision in keywords):
            continue
        repo = r.value(repo_node) if repo_node is not None else first
        if repo is None or repo is NONE or not looks_like_repo(repo.text):
            if k == 0:
                return []  # a variable, an f-string or a local path: not a pin we can name
            continue
        if k == 0:
            first = repo
        elif spec.follows and first is not None and repo.text == first.text and spec.revision not in keywords:
            continue  # vLLM's tokenizer, same repo, no revision of its own: the model's pin says it
        revision, dynamic, span = _revision(r.value(keywords.get(spec.revision)), splat and k == 0)
        found.append(Found(node.lineno, repo.text, revision, "python", dynamic, span=span, repo_span=repo.span,
                           repo_type=kind))
    return found


def _mapping_pins(pairs: dict[str, tuple[ast.expr, ast.expr]], r: Resolver, line: int | None = None) -> list[Found]:
    """A dict literal, `dict(...)` or class body naming a model and its revision (weak findings)."""
    found = []
    for key, rev_key in pair_keys(list(pairs)).items():
        key_node, value_node = pairs[key]
        if rev_key == AMBIGUOUS:
            continue
        repo = r.value(value_node)
        if repo is None or repo is NONE or not looks_like_repo(repo.text):
            continue
        revision, dynamic, span = _revision(r.value(pairs[rev_key][1]) if rev_key else None, False)
        found.append(Found(line or value_node.lineno, repo.text, revision, "python", dynamic, span=span,
                           repo_span=repo.span, weak=True))
    return found


def _dataset_constants(pairs: dict[str, tuple[ast.expr, ast.expr]], r: Resolver) -> list[Found]:
    """Module constants naming a dataset and its revision (`DATASET_ID = "org/name"`, `DATASET_REVISION =
    "<sha>"`), read where no loader call names them (weak findings, as for models)."""
    found = []
    for key, rev_key in dataset_keys(list(pairs)):
        if rev_key == AMBIGUOUS:
            continue
        repo = r.value(pairs[key][1])
        if repo is None or repo is NONE or not looks_like_dataset(repo.text):
            continue
        revision, dynamic, span = _revision(r.value(pairs[rev_key][1]) if rev_key else None, False)
        if revision is None and not dynamic:
            continue  # a dataset's name alone, with no revision beside it, is no pin of the module
        found.append(Found(pairs[key][1].lineno, repo.text, revision, "python", dynamic, span=span,
                           repo_span=repo.span, weak=True, repo_type="dataset"))
    return found


def _record_pins(node: ast.Call, r: Resolver) -> list[Found]:
    """A call that is no loader, read as a record of its keywords: `dict(model=…, revision=…)`, or a
    model registry entry such as mteb's `ModelMeta(name="org/name", revision="<sha>")`, where `name`
    names the repo when the call names no other model and gives a `revision` beside it. Only `dict(...)`
    reports a model named with no revision: `completion(model="openai/gpt-4o")` names no hub repo."""
    pairs = {kw.arg: (kw.value, kw.value) for kw in node.keywords if kw.arg}
    found = _mapping_pins(pairs, r, node.lineno)
    if not found and "name" in pairs and "revision" in pairs and not any(k in pairs for k in pair_keys(list(pairs))):
        found = _mapping_pins({"model": pairs["name"], "revision": pairs["revision"]}, r, node.lineno)
    if _call_name(node.func) == "dict":
        return found
    return [f for f in found if f.revision is not None or f.dynamic]


def _lock_pins(node: ast.Dict, r: Resolver) -> list[Found]:
    """`{"org/name": "<sha>"}` and `{"org/name": {"revision": "<sha>"}}`: a table of pinned revisions."""
    found = []
    for key, value in zip(node.keys, node.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and looks_like_repo(key.value)):
            continue
        target: ast.expr | None = value
        inner = r.node(value)
        if isinstance(inner, ast.Dict):
            target = next((v for k, v in zip(inner.keys, inner.values)
                           if isinstance(k, ast.Constant) and k.value in _NESTED_REVISION), None)
        rev = r.value(target) if target is not None else None
        revision, dynamic, span = _revision(rev, False)
        if revision is not None and len(revision) >= 7 and all(c in "0123456789abcdef" for c in revision.lower()):
            found.append(Found(key.lineno, key.value, revision, "python", span=span, weak=True))
    return found


def _assigned(stmt: ast.stmt) -> list[tuple[ast.expr, ast.expr]]:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return [(stmt.targets[0], stmt.value)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return [(stmt.target, stmt.value)]
    return []


def _str_pairs(keys: list[ast.expr | None], values: list[ast.expr]) -> dict[str, tuple[ast.expr, ast.expr]]:
    return {str(k.value): (k, v) for k, v in zip(keys, values) if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def scan_python(text: str) -> tuple[list[Found], str | None]:
    """Loader calls with a repo id the file names (and their revision), dicts and classes naming a model
    and its revision, and hub URLs in string literals."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        line = getattr(exc, "lineno", None)
        return [], f"not parseable as Python{f' (line {line})' if line else ''}"
    source = _Source(text)
    resolver = Resolver(tree, lambda c: source.span(c, str(c.value)))
    ignored = _ignored_strings(tree)
    aliases = _aliases(tree)
    found: list[Found] = []
    module: dict[str, tuple[ast.expr, ast.expr]] = {
        t.id: (t, v) for stmt in tree.body for t, v in _assigned(stmt) if isinstance(t, ast.Name)
    }  # MODEL_ID = …; MODEL_REVISION = …
    found += _mapping_pins(module, resolver) + _dataset_constants(module, resolver)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            found += _call_pins(node, resolver, aliases) if _specs(node, aliases) is not None \
                else _record_pins(node, resolver)
        elif isinstance(node, ast.Dict):
            found += _mapping_pins(_str_pairs(node.keys, node.values), resolver) + _lock_pins(node, resolver)
        elif isinstance(node, ast.ClassDef):
            fields = [(s.target, s.value) for s in node.body
                      if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is not None]
            found += _mapping_pins({t.id: (t, d) for t, v in fields if isinstance(t, ast.Name)
                                    for d in [field_default(v)] if d is not None}, resolver)
        elif isinstance(node, ast.JoinedStr) and any(h in "".join(
                str(v.value) for v in node.values if isinstance(v, ast.Constant)) for h in ("huggingface.co/", "hf.co/", "hf://")):
            value = resolver.value(node) or Value()
            for url in find_hub_urls(value.text):
                if looks_like_repo(url.repo) and (url.style == "url" or url.repo_type == "dataset"):
                    rev = url.revision
                    dynamic = rev is not None and "\ufffc" in rev
                    found.append(Found(node.lineno, url.repo, None if dynamic else rev, url.style, dynamic,
                                       span=value.span_of(*url.span) if url.span and not dynamic else None,
                                       repo_type=url.repo_type))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in ignored \
                and ("hf://" in node.value or "huggingface.co/" in node.value or "hf.co/" in node.value):
            for f in find_hf_urls(node.value, node.lineno, "hf-url"):
                span = (source.span(node, f"@{f.revision}") or source.span(node, f"/{f.revision}")) \
                    if f.revision else None
                found.append(replace(f, span=(span[0] + 1, span[1]) if span else None))
    return found, None
