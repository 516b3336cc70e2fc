"""Pin finder for YAML and JSON (Kubernetes, Helm values, Compose, GitHub Actions): the node tree, never tags."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace
from typing import Callable

import yaml

from hubwatch.pincheck.pins_shell import scan_shell
from hubwatch.pincheck.pins_text import (
    AMBIGUOUS, Found, Value, dataset_keys, find_hf_urls, line_starts, locate, looks_like_dataset, looks_like_repo,
    norm_key, pair_keys,
)

__all__ = ["scan_yaml"]

_ENV_KEYS = frozenset({"env", "environment", "variables", "env_vars", "envvars"})
_SCRIPT_KEYS = frozenset({"run", "script", "before_script", "after_script", "commands", "command", "args",
                          "entrypoint", "cmd"})
_NESTED_MODEL = frozenset({"model", "base_model", "tokenizer", "llm", "embedding", "embedder", "reranker",
                           "adapter", "draft_model"})
_NESTED_REPO = ("repo_id", "repo", "repository", "id", "model_id", "name", "name_or_path", "hf_repo")
_NESTED_REV = ("revision", "rev", "commit", "sha", "model_revision")
_TEMPLATED = ("${{", "{{", "${")


def _scalar(node: yaml.Node | None) -> str | None:
    return node.value if isinstance(node, yaml.ScalarNode) and isinstance(node.value, str) else None


class _Doc:
    """The YAML text, to map a scalar's characters back to where they are written."""

    def __init__(self, text: str, style: str) -> None:
        self.text, self.style = text, style
        self.starts = line_starts(text)

    def line(self, offset: int) -> int:
        return bisect_right(self.starts, offset)

    def mapper(self, node: yaml.ScalarNode) -> Callable[[int], int | None]:
        """Offset in the scalar's value → offset in the file (None where it is not written as is)."""
        value, start = node.value, node.start_mark.index
        if node.style in (None, "", "'", '"') and "\n" not in value:
            base = start + (1 if node.style else 0)
            return lambda k: base + k if self.text[base + k: base + k + 1] == value[k: k + 1] else None
        if node.style == "|":
            table: list[int | None] = []
            line = node.start_mark.line + 1
            for part in value.split("\n"):
                begin = self.starts[line] if line < len(self.starts) else len(self.text)
                end = self.text.find("\n", begin)
                physical = self.text[begin: end if end >= 0 else len(self.text)].rstrip("\r")
                at = begin + len(physical) - len(part) if part and physical.endswith(part) else None
                table += [None if at is None else at + k for k in range(len(part))] + [None]
                line += 1
            return lambda k: table[k] if 0 <= k < len(table) else None
        return lambda k: None

    def value(self, node: yaml.Node | None) -> Value:
        text = _scalar(node)
        if text is None or any(t in text for t in _TEMPLATED):
            return Value.dynamic()
        assert isinstance(node, yaml.ScalarNode)
        at = self.mapper(node)(0) if text else None
        return Value.of(text, at if at is not None and self.text[at: at + len(text)] == text else None)


def _env_of(node: yaml.Node, doc: _Doc) -> dict[str, tuple[yaml.Node, Value]]:
    """Variables an `env:` sets: a mapping, a list of `{name, value}` (Kubernetes), or `KEY=value` strings."""
    out: dict[str, tuple[yaml.Node, Value]] = {}
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if _scalar(k) is not None:
                out[str(_scalar(k))] = (v, doc.value(v))
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if isinstance(item, yaml.MappingNode):
                fields = {_scalar(k): v for k, v in item.value}
                name = _scalar(fields.get("name"))
                if name is not None:
                    value = fields.get("value")
                    out[name] = (value or item, doc.value(value) if value is not None else Value.dynamic())
            elif _scalar(item) is not None and "=" in str(_scalar(item)):
                assert isinstance(item, yaml.ScalarNode)
                name, _, rest = str(item.value).partition("=")
                at = doc.mapper(item)(len(name) + 1)
                out[name.strip()] = (item, Value.of(rest, at) if rest and not any(t in rest for t in _TEMPLATED)
                                     else Value.dynamic())
    return out


def _pin(doc: _Doc, repo_node: yaml.Node, repo: Value, rev: Value | None, weak: bool = False) -> Found:
    dynamic = rev is not None and (rev.is_dynamic or not rev.text)
    return Found(repo_node.start_mark.line + 1, repo.text.strip(), None if rev is None or dynamic else rev.text,
                 doc.style, dynamic, span=None if rev is None or dynamic else rev.span, repo_span=repo.span,
                 weak=weak)


def _pairs(doc: _Doc, values: dict[str, tuple[yaml.Node, Value]], weak: bool) -> list[Found]:
    found = []
    for key, rev_key in pair_keys(list(values)).items():
        node, repo = values[key]
        if rev_key == AMBIGUOUS or _scalar(node) is None or not looks_like_repo(repo.text.strip()):
            continue
        rev = values[rev_key][1] if rev_key else None
        if rev_key and _scalar(values[rev_key][0]) is None and not isinstance(values[rev_key][0], yaml.ScalarNode):
            rev = Value.dynamic()
        found.append(_pin(doc, node, repo, rev, weak))
    return found


def _datasets(doc: _Doc, values: dict[str, tuple[yaml.Node, Value]], container: str | None,
              weak: bool = False) -> list[Found]:
    """Datasets a config mapping names (`dataset_name:`, `dataset_path:` with `dataset_kwargs: {revision:}`,
    axolotl's `datasets: - path:`, torchtune's `dataset: source:`), with their revision keys; `weak`: an
    `env:` mapping's variables, where only a dataset with its revision beside it is a pin."""
    found = []
    for key, rev_key in dataset_keys(list(values), container):
        if rev_key == AMBIGUOUS or (weak and rev_key is None):
            continue
        node, repo = values[key]
        if _scalar(node) is None or not looks_like_dataset(repo.text.strip()):
            continue
        rev = values[rev_key][1] if rev_key else None
        if rev_key and not isinstance(values[rev_key][0], yaml.ScalarNode):
            rev = Value.dynamic()
        kwargs = next((n for k, (n, _) in values.items() if norm_key(k) == "dataset_kwargs"), None)
        if rev is None and isinstance(kwargs, yaml.MappingNode):  # lm-evaluation-harness: load_dataset's kwargs
            given = {_scalar(k): v for k, v in kwargs.value}
            rev = doc.value(given["revision"]) if "revision" in given else None
        found.append(replace(_pin(doc, node, repo, rev, weak), repo_type="dataset"))
    return found


def _mixer(doc: _Doc, node: yaml.Node) -> list[Found]:
    """alignment-handbook's `dataset_mixer: {ORG/NAME: fraction}`: each key a dataset, no revision."""
    if not isinstance(node, yaml.MappingNode):
        return []
    return [replace(_pin(doc, k, doc.value(k), None), repo_type="dataset") for k, _ in node.value
            if looks_like_dataset((_scalar(k) or "").strip())]


def _typed(found: list[Found], values: dict[str, tuple[yaml.Node, Value]]) -> list[Found]:
    """A mapping's `repo_type: dataset` makes its repo a dataset (a space, or a computed type: no pin)."""
    given = next((v.text.strip() for k, (_, v) in values.items() if norm_key(k) == "repo_type"), "model")
    if given == "model":
        return found
    return [replace(f, repo_type="dataset") for f in found] if given == "dataset" else []


def _scripts(doc: _Doc, pairs: list[tuple[str, yaml.Node]], env: dict[str, Value]) -> list[Found]:
    """Shell in `run:`/`script:`/`command:`/`args:` values, with the variables the enclosing `env:` sets."""
    found: list[Found] = []
    line_words: list[yaml.ScalarNode] = []
    image = next((n for k, n in pairs if k == "image" and isinstance(n, yaml.ScalarNode)), None)
    for key, node in pairs:
        if key not in _SCRIPT_KEYS:
            continue
        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        for item in items:
            if not isinstance(item, yaml.ScalarNode) or not isinstance(item.value, str):
                continue
            if "\n" in item.value.strip() or (key in ("run", "script") or len(items) == 1):
                mapper = doc.mapper(item)
                first = item.start_mark.line + (1 if item.style in ("|", ">") else 0)

                found += scan_shell(item.value, env, mapper, _block_lines(doc, mapper, first, item.value))[0]
            else:
                line_words.append(item)
    if line_words:  # command: [vllm, serve] / args: [--model, org/name, --revision, sha]: one command line
        words = ([image] if image is not None else []) + line_words
        text, table = "", []
        for w in words:
            mapper = doc.mapper(w)
            quoted = "'" + w.value.replace("'", "") + "'"
            table += [None] + [mapper(k) for k in range(len(quoted) - 2)] + [None, None]
            text += quoted + " "
        inner = [w.start_mark.index for w in words]

        def line_of(k: int) -> int:
            at = next((table[j] for j in range(k, min(k + 3, len(table))) if table[j] is not None), None)
            return doc.line(at) if at is not None else doc.line(inner[0]) if inner else 1

        found += scan_shell(text, env, lambda k: table[k] if k < len(table) else None, line_of)[0]
    return found


def _block_lines(doc: _Doc, mapper: Callable[[int], int | None], first: int, value: str) -> Callable[[int], int]:
    """Offset in a script scalar → the file's line (from where it is written, else counted from its start)."""
    def line_of(k: int) -> int:
        at = mapper(k)
        return doc.line(at) if at is not None else first + value.count("\n", 0, k) + 1
    return line_of


def _walk(node: yaml.Node, doc: _Doc, out: list[Found], env: dict[str, Value], is_env: bool = False,
          under: str | None = None) -> None:
    if isinstance(node, yaml.MappingNode):
        pairs = [(_scalar(k), v) for k, v in node.value]
        named = [(str(k), v) for k, v in pairs if k is not None]
        values = {k: (v, doc.value(v)) for k, v in named}
        if not is_env:  # an env: mapping's variables are paired (weakly) where it is read
            out.extend(_typed(_pairs(doc, values, weak=False), values))
            out.extend(_datasets(doc, values, under))
            out.extend(f for k, v in named if norm_key(k) == "dataset_mixer" for f in _mixer(doc, v))
        inner_env = dict(env)
        for key, value in named:
            if norm_key(key) in _ENV_KEYS:
                variables = _env_of(value, doc)
                inner_env.update({k: v for k, (_, v) in variables.items()})
                out.extend(_pairs(doc, variables, weak=True) + _datasets(doc, variables, None, weak=True))
            elif norm_key(key) in _NESTED_MODEL and isinstance(value, yaml.MappingNode):
                fields = {norm_key(str(_scalar(k))): v for k, v in value.value if _scalar(k) is not None}
                if not any(k in pair_keys(list(fields)) for k in fields):
                    repo = next((fields[k] for k in _NESTED_REPO if k in fields), None)
                    rev = next((fields[k] for k in _NESTED_REV if k in fields), None)
                    if repo is not None and looks_like_repo((_scalar(repo) or "").strip()):
                        out.append(_pin(doc, repo, doc.value(repo), doc.value(rev) if rev is not None else None))
        out.extend(_scripts(doc, [(norm_key(k), v) for k, v in named], inner_env))
        for maybe_key, value in pairs:
            if maybe_key is None or norm_key(maybe_key) not in _SCRIPT_KEYS:
                _walk(value, doc, out, inner_env, maybe_key is not None and norm_key(maybe_key) in _ENV_KEYS,
                      norm_key(maybe_key) if maybe_key is not None else None)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _walk(item, doc, out, env, under=under)  # a list's entries sit under the list's key
    elif isinstance(node, yaml.ScalarNode) and isinstance(node.value, str) \
            and ("hf://" in node.value or "huggingface.co/" in node.value or "hf.co/" in node.value):
        for f in find_hf_urls(node.value, node.start_mark.line + 1, "hf-url"):
            span = None
            if f.revision:
                span = locate(doc.text, node.start_mark.index, node.end_mark.index, f"@{f.revision}") \
                    or locate(doc.text, node.start_mark.index, node.end_mark.index, f"/{f.revision}")
            out.append(replace(f, span=(span[0] + 1, span[1]) if span else None))


def scan_yaml(text: str, style: str) -> tuple[list[Found], str | None]:
    """Model keys with a revision beside them, env variables, shell steps and hub URLs, read from YAML
    (or JSON) nodes. Only the node tree is built (`yaml.compose`): no tags are constructed, nothing is executed.
    """
    if style == "json":
        text = text.replace("\t", " ")  # JSON forbids raw tabs inside strings; PyYAML rejects them as indent
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    found: list[Found] = []
    doc = _Doc(text, style)
    try:
        for document in yaml.compose_all(text, Loader=loader):
            if document is not None:
                _walk(document, doc, found, {})
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        urls = [f for number, line in enumerate(text.split("\n"), start=1)
                for f in find_hf_urls(line, number, "hf-url", doc.starts[number - 1])]
        return urls, f"not parseable as {style.upper()}{where}; only hf:// URLs were looked for"
    return found, None
