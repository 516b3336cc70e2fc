"""Pin finders for non-Python files: YAML/JSON (node marks), TOML, shell and Dockerfiles, hf:// URLs."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from typing import Any, Iterator, Sequence
from urllib.parse import unquote

import yaml

__all__ = [
    "Found",
    "MODEL_KEYS",
    "find_hf_urls",
    "line_starts",
    "locate",
    "revision_keys",
    "scan_notebook_shell",
    "scan_shell",
    "scan_toml",
    "scan_yaml",
    "strip_comment",
]


@dataclass(frozen=True)
class Found:
    """A raw finding before the repo id is checked."""

    line: int
    repo: str
    revision: str | None
    style: str
    dynamic: bool = False
    cell: int | None = None
    span: tuple[int, int] | None = None  # where the revision's text is, as offsets into the scanned text


def line_starts(text: str) -> list[int]:
    """The offset of each line's first character (lines end at \\r\\n, \\r or \\n, as Python counts them)."""
    return [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]


def locate(text: str, start: int, end: int, needle: str | None) -> tuple[int, int] | None:
    """The span of the first `needle` within text[start:end], or None (a revision written some other way)."""
    if not needle:
        return None
    at = text.find(needle, max(start, 0), end)
    return (at, at + len(needle)) if at >= 0 else None


# Keys that name a model repo in config files, and where its revision sits beside it.
MODEL_KEYS = (
    "model", "model_id", "model_name", "model_name_or_path", "pretrained_model_name_or_path",
    "repo_id", "base_model", "tokenizer", "tokenizer_name", "tokenizer_name_or_path",
)


def revision_keys(key: str) -> tuple[str, ...]:
    """The sibling keys that hold the revision of the repo named under `key`, in preference order."""
    if key.startswith("tokenizer"):
        return (f"{key}_revision", "tokenizer_revision", "revision")
    return (f"{key}_revision", "model_revision", "revision_of_model", "revision")


_HF_URL = re.compile(
    r"hf://(?!datasets/|spaces/|buckets/)(?:models/)?"
    r"(?P<org>[A-Za-z0-9][A-Za-z0-9._-]*)/(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)"
    r"(?:@(?P<rev>[^/\s'\"`,;)\]}]+))?"
)
_CLI = re.compile(
    r"(?:^|[\s;&|(])(?:huggingface-cli|hf)\s+download\s+['\"]?(?P<repo>[A-Za-z0-9][^\s'\"]*)['\"]?(?P<rest>.*)"
)
_CLI_REVISION = re.compile(r"--revision(?:=|\s+)['\"]?(?P<rev>[^\s'\"]+)")
_CLI_NOT_MODEL = re.compile(r"--repo-type(?:=|\s+)['\"]?(?:dataset|space)")


def _hf_urls(text: str) -> Iterator[tuple[int, str, str | None, tuple[int, int] | None]]:
    for match in _HF_URL.finditer(text):
        rev = match.group("rev")
        repo = f"{match.group('org')}/{match.group('name').rstrip('.-')}"
        span = (match.start("rev"), match.end("rev")) if rev else None
        yield match.start(), repo, unquote(rev) if rev else None, span


def find_hf_urls(text: str, first_line: int, style: str, base: int | None = None) -> list[Found]:
    """`hf://org/name[@rev]` URLs in `text` (models only), with their line numbers; with `base`
    (where `text` starts in the file) the revision's span too."""
    return [
        Found(first_line + text.count("\n", 0, at), repo, rev, style,
              span=(base + span[0], base + span[1]) if base is not None and span else None)
        for at, repo, rev, span in _hf_urls(text)
    ]


def strip_comment(line: str) -> str:
    """The line without a trailing `#` comment (a `#` at the start or after a space, outside quotes)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


class _Logical:
    """A logical line (backslash continuations joined, comments removed) and where its parts began."""

    def __init__(self) -> None:
        self.text = ""
        self.starts: list[tuple[int, int, int | None]] = []  # (offset in text, physical line, its file offset)

    def add(self, part: str, number: int, at: int | None = None) -> None:
        if self.text:
            self.text += " "
        self.starts.append((len(self.text), number, at))
        self.text += part

    def line_at(self, offset: int) -> int:
        return max(((o, n) for o, n, _ in self.starts if o <= offset), default=(0, self.starts[0][1]))[1]

    def file_span(self, start: int, end: int) -> tuple[int, int] | None:
        """Where text[start:end] (within one physical line) is in the file, when the parts' offsets are known."""
        o, _, at = max(((o, n, a) for o, n, a in self.starts if o <= start), default=self.starts[0])
        return (at + start - o, at + end - o) if at is not None else None


def _logical_lines(text: str) -> Iterator[_Logical]:
    current = _Logical()
    at = 0
    for number, raw in enumerate(text.split("\n"), start=1):
        start, at = at, at + len(raw) + 1
        line = strip_comment(raw.rstrip("\r")).rstrip()
        if line.endswith("\\"):
            current.add(line[:-1], number, start)
            continue
        current.add(line, number, start)
        yield current
        current = _Logical()
    if current.starts:
        yield current


def _cli_calls(logical: _Logical, style: str) -> list[Found]:
    found = []
    for match in _CLI.finditer(logical.text):
        rest = match.group("rest")
        if _CLI_NOT_MODEL.search(rest):
            continue
        rev = _CLI_REVISION.search(rest)
        number = logical.line_at(match.start("repo"))
        span = None
        if rev:
            base = match.start("rest")
            span = logical.file_span(base + rev.start("rev"), base + rev.end("rev"))
        found.append(Found(number, match.group("repo"), rev.group("rev") if rev else None, style, span=span))
    return found


def _urls(logical: _Logical) -> list[Found]:
    return [
        Found(logical.line_at(at), repo, rev, "hf-url", span=logical.file_span(*span) if span else None)
        for at, repo, rev, span in _hf_urls(logical.text)
    ]


def scan_shell(text: str) -> list[Found]:
    """`huggingface-cli download` / `hf download` commands and hf:// URLs, comments excluded."""
    found: list[Found] = []
    for logical in _logical_lines(text):
        found += _cli_calls(logical, "cli")
        found += _urls(logical)
    return found


def scan_notebook_shell(lines: Sequence[str]) -> list[Found]:
    """Shell escapes (`!hf download …`) in a notebook cell's lines (spans: offsets into the cell's code)."""
    found: list[Found] = []
    at = 0
    for number, line in enumerate(lines, start=1):
        start, at = at, at + len(line) + 1
        stripped = line.lstrip()
        if stripped.startswith("!"):
            logical = _Logical()
            logical.add(strip_comment(stripped[1:]), number, start + len(line) - len(stripped) + 1)
            found += _cli_calls(logical, "cli")
    return found


def _scalar(node: yaml.Node | None) -> str | None:
    return node.value if isinstance(node, yaml.ScalarNode) and isinstance(node.value, str) else None


def _node_span(text: str, node: yaml.Node | None, needle: str | None) -> tuple[int, int] | None:
    if node is None:
        return None
    return locate(text, node.start_mark.index, node.end_mark.index, needle)


def _walk_yaml(node: yaml.Node, style: str, out: list[Found], source: str) -> None:
    if isinstance(node, yaml.MappingNode):
        pairs = [(_scalar(k), v) for k, v in node.value]
        values = {k: v for k, v in pairs if k is not None}
        for key, value in pairs:
            text = _scalar(value)
            if key in MODEL_KEYS and text is not None and text.count("/") == 1 and "://" not in text:
                rev_node = next((values[k] for k in revision_keys(key) if k in values), None)
                revision = _scalar(rev_node) if rev_node is not None else None
                dynamic = rev_node is not None and revision is None
                span = _node_span(source, rev_node, revision)
                out.append(Found(value.start_mark.line + 1, text.strip(), revision, style, dynamic, span=span))
            _walk_yaml(value, style, out, source)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _walk_yaml(item, style, out, source)
    elif isinstance(node, yaml.ScalarNode) and isinstance(node.value, str) and "hf://" in node.value:
        for f in find_hf_urls(node.value, node.start_mark.line + 1, "hf-url"):
            span = _node_span(source, node, f"@{f.revision}") if f.revision else None
            out.append(replace(f, span=(span[0] + 1, span[1]) if span else None))


def scan_yaml(text: str, style: str) -> tuple[list[Found], str | None]:
    """Model keys with a revision beside them, and hf:// URLs, read from YAML (or JSON) nodes.

    Only the node tree is built (`yaml.compose`): no tags are constructed, nothing is executed.
    """
    if style == "json":
        text = text.replace("\t", " ")  # JSON forbids raw tabs inside strings; PyYAML rejects them as indent
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    found: list[Found] = []
    try:
        for document in yaml.compose_all(text, Loader=loader):
            if document is not None:
                _walk_yaml(document, style, found, text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        urls = [f for logical in _logical_lines(text) for f in _urls(logical)]
        return urls, f"not parseable as {style.upper()}{where}; only hf:// URLs were looked for"
    return found, None


def _toml_mappings(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _toml_mappings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _toml_mappings(item)


def scan_toml(text: str) -> tuple[list[Found], str | None]:
    """Model keys with a revision beside them in any TOML table (inline ones too), and hf:// URLs."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return [], f"not parseable as TOML ({exc})"
    lines = [strip_comment(line) for line in text.split("\n")]
    starts = [0]
    for physical in text.split("\n"):
        starts.append(starts[-1] + len(physical) + 1)
    used: set[int] = set()
    taken: set[int] = set()
    found: list[Found] = []
    for mapping in _toml_mappings(data):
        for key in MODEL_KEYS:
            repo = mapping.get(key)
            if not isinstance(repo, str) or repo.count("/") != 1 or "://" in repo:
                continue
            rev_key = next((k for k in revision_keys(key) if k in mapping), None)
            revision = mapping.get(rev_key) if rev_key else None
            line = _locate(lines, key, repo, used)
            span = None
            if rev_key and isinstance(revision, str) and line:
                span = _locate_value(lines, starts, line, rev_key, revision, taken)
            found.append(Found(line, repo, revision if isinstance(revision, str) else None, "toml",
                               dynamic=rev_key is not None and not isinstance(revision, str), span=span))
    for number, text in enumerate(lines, start=1):
        found += find_hf_urls(text, number, "hf-url", starts[number - 1])
    return found, None


def _assignment(key: str, value: str) -> re.Pattern[str]:
    return re.compile(rf"(?:^|[\s{{,.]){re.escape(key)}['\"]?\s*=\s*(['\"]){re.escape(value)}\1")


def _locate(lines: Sequence[str], key: str, value: str, used: set[int]) -> int:
    """The first not yet used line that assigns `value` to `key` (TOML gives no line numbers)."""
    pattern = _assignment(key, value)
    for number, line in enumerate(lines, start=1):
        if number not in used and pattern.search(line):
            used.add(number)
            return number
    return 0


def _locate_value(lines: Sequence[str], starts: Sequence[int], line: int, key: str, value: str,
                  taken: set[int]) -> tuple[int, int] | None:
    """Where `key = "value"` puts the value, in the table holding `line` (its line first, then the rest)."""
    header = re.compile(r"^\s*\[")
    first = next((n for n in range(line, 0, -1) if n != line and header.match(lines[n - 1])), 0) + 1
    last = next((n for n in range(line + 1, len(lines) + 1) if header.match(lines[n - 1])), len(lines) + 1)
    pattern = _assignment(key, value)
    for number in [line, *range(first, last)]:
        for match in pattern.finditer(lines[number - 1]):
            at = starts[number - 1] + match.end() - 1 - len(value)
            if at not in taken:
                taken.add(at)
                return at, at + len(value)
    return None
