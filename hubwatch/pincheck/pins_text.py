"""Shared pieces of the pin finders: findings, resolved values, model/revision key pairing, hub URLs, TOML."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence
from urllib.parse import unquote

__all__ = [
    "AMBIGUOUS",
    "DATASET_KEYS",
    "DYN",
    "Found",
    "HubUrl",
    "MODEL_KEYS",
    "Piece",
    "Value",
    "find_hf_urls",
    "dataset_keys",
    "drop_weak",
    "find_hub_urls",
    "line_starts",
    "locate",
    "looks_like_dataset",
    "looks_like_repo",
    "norm_key",
    "pair_keys",
    "revision_keys",
    "scan_toml",
    "strip_comment",
]

# Stands in for a part of a value computed at run time (a parameter, an unset variable, `$(…)`).
DYN = "\ufffc"


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
    repo_span: tuple[int, int] | None = None  # where the repo id is written (to drop a second finding of it)
    weak: bool = False  # read from names alone (a model variable beside a revision one): a stronger finding wins
    repo_type: str = "model"  # "dataset": `load_dataset(…)` or a call with repo_type="dataset"


@dataclass(frozen=True)
class Piece:
    """Part of a resolved value: its text and, when it is written plainly in the file, where it starts."""

    text: str
    at: int | None = None


@dataclass(frozen=True)
class Value:
    """A string as the scanner resolved it, piece by piece (literal text, a variable's value, DYN)."""

    pieces: tuple[Piece, ...] = ()
    names: frozenset[str] = field(default=frozenset())  # the variables it was read through

    @staticmethod
    def of(text: str, at: int | None = None, names: frozenset[str] = frozenset()) -> Value:
        return Value((Piece(text, at),), names)

    @staticmethod
    def dynamic(names: frozenset[str] = frozenset()) -> Value:
        return Value((Piece(DYN),), names)

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.pieces)

    @property
    def is_dynamic(self) -> bool:
        return DYN in self.text

    def __add__(self, other: Value) -> Value:
        pieces = list(self.pieces)
        for piece in other.pieces:
            last = pieces[-1] if pieces else None
            if last is not None and last.at is not None and piece.at == last.at + len(last.text):
                pieces[-1] = Piece(last.text + piece.text, last.at)  # written on, plainly: one piece
            else:
                pieces.append(piece)
        return Value(tuple(pieces), self.names | other.names)

    def span_of(self, start: int, end: int) -> tuple[int, int] | None:
        """Where text[start:end] is written in the file, when it lies inside one plainly written piece."""
        offset = 0
        for piece in self.pieces:
            stop = offset + len(piece.text)
            if offset <= start and end <= stop:
                return (piece.at + start - offset, piece.at + end - offset) if piece.at is not None else None
            offset = stop
        return None

    @property
    def span(self) -> tuple[int, int] | None:
        return self.span_of(0, len(self.text)) if self.text else None


def drop_weak(found: list[Found]) -> list[Found]:
    """Without the weak findings (a model named beside a revision, not passed to a loader) that a stronger
    finding of the same written repo or revision already reports, nor repeats of one."""
    strong = {f.repo_span for f in found if not f.weak and f.repo_span is not None}
    strong_revs = {f.span for f in found if not f.weak and f.span is not None}
    seen: set[tuple[int, str, str | None]] = set()
    out = []
    for f in found:
        if f.weak and (f.repo_span in strong or f.span in strong_revs or (f.line, f.repo, f.revision) in seen):
            continue
        seen.add((f.line, f.repo, f.revision))
        out.append(f)
    return out


def line_starts(text: str) -> list[int]:
    """The offset of each line's first character (lines end at \\r\\n, \\r or \\n, as Python counts them)."""
    return [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]


def locate(text: str, start: int, end: int, needle: str | None) -> tuple[int, int] | None:
    """The span of the first `needle` within text[start:end], or None (a revision written some other way)."""
    if not needle:
        return None
    at = text.find(needle, max(start, 0), end)
    return (at, at + len(needle)) if at >= 0 else None


_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")
_NOT_ORGS = frozenset({"datasets", "spaces", "models", "api", "docs", "blog", "papers", "settings", "join", "login",
                       "organizations", "collections", "pricing", "tasks", "learn", "new", "posts", "chat"})


def looks_like_repo(text: str | None) -> bool:
    """`org/name` as a hub id is written (not a local path such as `./x/y`, `/x`, `~/x` or a URL)."""
    return text is not None and bool(_REPO.fullmatch(text)) and ".." not in text


# Keys that name a model repo in config files, and where its revision sits beside it.
MODEL_KEYS = (
    "model", "model_id", "model_name", "model_name_or_path", "pretrained_model_name_or_path",
    "repo_id", "base_model", "tokenizer", "tokenizer_name", "tokenizer_name_or_path",
)
# A key ending in one of these (after a prefix such as `embedding_` or `hf_`) names a model too.
_SUFFIXES = ("model_name_or_path", "model_id", "model_name", "model_repo", "model_repository", "model",
             "tokenizer_name_or_path", "tokenizer_name", "tokenizer", "repo_id")


def revision_keys(key: str) -> tuple[str, ...]:
    """The sibling keys that hold the revision of the repo named under `key`, in preference order."""
    if key.startswith("tokenizer"):
        return (f"{key}_revision", "tokenizer_revision", "revision")
    return (f"{key}_revision", "model_revision", "revision_of_model", "revision")


def norm_key(key: str) -> str:
    """A key as snake case: `modelId`, `MODEL_ID` and `model-id` all read `model_id`."""
    key = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key.strip())
    return key.replace("-", "_").replace(".", "_").lower()


def _prefixed(key: str) -> tuple[str, str] | None:
    """(prefix, suffix) for a key such as `embedding_model_id`; None when it names no model."""
    for suffix in _SUFFIXES:
        if key == suffix:
            return "", suffix
        if key.endswith("_" + suffix):
            return key[: -len(suffix)], suffix
    return None


# Keys that name a dataset repo in training and evaluation configs (TRL's and open-r1's `dataset_name`,
# lm-evaluation-harness's `dataset_path`, …), and the keys holding its revision beside it.
DATASET_KEYS = ("dataset", "dataset_id", "dataset_name", "dataset_path", "dataset_repo", "dataset_repo_id",
                "dataset_name_or_path", "hf_dataset", "hf_dataset_id", "hf_dataset_name")
# A mapping under one of these keys (or a list of them) describes one dataset: axolotl's `datasets:` and
# `test_datasets:` entries (`path:`), torchtune's `dataset:` (`source:`), alignment-handbook's
# `dataset_mixture: datasets:` (`id:`).
DATASET_CONTAINERS = frozenset({"dataset", "datasets", "train_dataset", "eval_dataset", "test_dataset",
                                "test_datasets", "eval_datasets", "train_datasets", "pretraining_dataset"})
DATASET_ENTRY_REPO = ("path", "source", "id", "repo_id", "repo", "hf_repo")
DATASET_ENTRY_REV = ("revision", "dataset_revision", "rev", "commit", "sha")
_DATA_FILE = re.compile(
    r".*\.(?:jsonl?|csv|tsv|parquet|arrow|txt|text|xml|yaml|yml|pkl|pickle|pt|npy|npz|h5|hdf5|feather|"
    r"gz|bz2|xz|zst|zip|tar|tgz|py)$", re.I)
_LOCAL_ORGS = frozenset({"data", "dataset", "datasets", "local", "tmp", "temp", "output", "outputs", "cache",
                         "home", "mnt", "workspace", "input", "inputs", "raw", "processed", "files", "assets"})


def looks_like_dataset(text: str | None) -> bool:
    """`org/name` as a dataset repo is written: not a local file (`data/train.jsonl`) or a folder under a
    local data directory (`data/mine`, `outputs/run1`), which config files name just as often."""
    if not looks_like_repo(text):
        return False
    assert text is not None
    org = text.split("/", 1)[0].lower()
    return not _DATA_FILE.fullmatch(text) and org not in _LOCAL_ORGS


def dataset_keys(keys: Sequence[str], container: str | None = None) -> list[tuple[str, str | None]]:
    """(repo key, revision key, None or AMBIGUOUS) for each dataset a mapping with `keys` names; `container`: the
    (snake case) key the mapping sits under. A mapping naming a model too only gives a dataset its own
    revision key (`dataset_revision`), never a bare `revision`; lm-evaluation-harness's `dataset_name`
    beside `dataset_path` is a config name, not a repo."""
    normal = {norm_key(k): k for k in keys}
    models = bool(pair_keys(list(keys)))
    out: list[tuple[str, str | None]] = []
    for key in DATASET_KEYS:
        if key not in normal or (key == "dataset_name" and "dataset_path" in normal):
            continue
        candidates = [f"{key}_revision", "dataset_revision"] + ([] if models else ["revision"])
        rev = next((normal[c] for c in candidates if c in normal), None)
        out.append((normal[key], rev))
    if not out and container in DATASET_CONTAINERS and not models:
        repo = next((normal[k] for k in DATASET_ENTRY_REPO if k in normal), None)
        if repo is not None:
            out.append((repo, next((normal[k] for k in DATASET_ENTRY_REV if k in normal), None)))
    shared = [rev for _, rev in out if rev is not None]
    # a revision two datasets could own (`DATASET_REPO` and `DATASET_NAME` beside one `DATASET_REVISION`)
    return [(key, AMBIGUOUS if rev is not None and shared.count(rev) > 1 else rev) for key, rev in out]


AMBIGUOUS = ""  # pair_keys: a revision two models could own; neither gets it, and neither is reported


def pair_keys(keys: Sequence[str]) -> dict[str, str | None]:
    """Which of a mapping's keys name a model, and which sibling key holds each one's revision.

    Keys are compared in snake case. A plain model key (`model`, `model_id`, …) takes the sibling
    revision keys it always did; a prefixed one (`embedding_model`, `HF_MODEL_ID`) takes
    `<prefix>revision`, `<prefix>model_revision` or `<key>_revision`, and a bare `revision` only
    when it is the mapping's one model key. A revision two model keys could own (`model` and
    `model_repository` beside one `model_revision`) is AMBIGUOUS: a revision is never given to a
    model it may not belong to (a model and its tokenizer still share one `revision`).
    """
    normal = {norm_key(k): k for k in keys}
    models = {n: k for n, k in normal.items() if _prefixed(n) is not None and not n.startswith("served_")}
    chosen: dict[str, str | None] = {}
    for n in models:
        prefix, suffix = _prefixed(n) or ("", n)
        if n in MODEL_KEYS or not prefix:
            candidates = list(revision_keys(n))
        else:
            kind = "tokenizer" if suffix.startswith("tokenizer") else "model"
            candidates = [f"{n}_revision", f"{prefix}{kind}_revision", f"{prefix}revision", f"{prefix}rev"]
            if len(models) == 1:
                candidates += list(revision_keys(suffix))
        chosen[n] = next((c for c in candidates if c in normal and c not in models), None)
    out: dict[str, str | None] = {}
    for n, rev in chosen.items():
        rivals = [m for m, r in chosen.items() if r == rev and m != n]
        shared = n in MODEL_KEYS and all(m in MODEL_KEYS for m in rivals) and \
            sum(not m.startswith("tokenizer") for m in [n, *rivals]) <= 1  # a model and its tokenizer
        own = not rivals or shared
        out[models[n]] = (normal[rev] if own else AMBIGUOUS) if rev is not None else None
    return out


_HF_URL = re.compile(
    r"hf://(?!spaces/|buckets/)(?:(?P<type>models|datasets)/|(?!datasets/))"
    r"(?P<org>[A-Za-z0-9\ufffc][A-Za-z0-9._\ufffc-]*)/(?P<name>[A-Za-z0-9\ufffc][A-Za-z0-9._\ufffc-]*)"
    r"(?:@(?P<rev>[^/\s'\"`,;)\]}]+))?"
)
# https://huggingface.co/[datasets/]ORG/NAME/resolve|blob|raw|tree/REV/…, and git+https://huggingface.co/ORG/NAME[.git][@REV]
_HUB_URL = re.compile(
    r"(?P<git>git\+)?https?://(?:www\.)?(?:huggingface\.co|hf\.co)/(?P<type>datasets/)?"
    r"(?P<org>[A-Za-z0-9\ufffc][A-Za-z0-9._\ufffc-]*)/(?P<name>[A-Za-z0-9\ufffc][A-Za-z0-9._\ufffc-]*)"
    r"(?:/(?:resolve|blob|raw|tree)/(?P<rev>[^/\s'\"`?#)\]}]+)|@(?P<at>[^/\s'\"`,;#)\]}]+))?"
)


@dataclass(frozen=True)
class HubUrl:
    """A hub URL found in a text: where it starts, the repo, its revision (and where that is written)."""

    at: int
    repo: str
    revision: str | None
    span: tuple[int, int] | None  # the revision's characters, as offsets into the text searched
    style: str  # hf-url (hf://…) or url (https://huggingface.co/…)
    repo_type: str = "model"  # "dataset": hf://datasets/… or huggingface.co/datasets/…


def _hf_urls(text: str) -> Iterator[HubUrl]:
    for match in _HF_URL.finditer(text):
        rev = match.group("rev")
        repo = f"{match.group('org')}/{match.group('name').rstrip('.-')}"
        span = (match.start("rev"), match.end("rev")) if rev else None
        kind = "dataset" if match.group("type") == "datasets" else "model"
        yield HubUrl(match.start(), repo, unquote(rev) if rev else None, span, "hf-url", kind)


def _hub_urls(text: str) -> Iterator[HubUrl]:
    for match in _HUB_URL.finditer(text):
        org, name = match.group("org"), match.group("name")
        dataset = match.group("type") is not None
        if org.lower() in _NOT_ORGS and not dataset:
            continue
        group = "rev" if match.group("rev") else "at" if match.group("at") else None
        if group is None and not match.group("git"):
            continue  # a bare link to a model's or a dataset's page pins nothing
        if dataset and group != "rev":
            continue  # a dataset is pinned by its resolve/blob/raw/tree URLs; `git+…@rev` installs models' code
        name = name[:-4] if name.endswith(".git") else name.rstrip(".-")
        rev = match.group(group) if group else None
        span = (match.start(group), match.end(group)) if group else None
        yield HubUrl(match.start(), f"{org}/{name}", unquote(rev) if rev else None, span, "url",
                     "dataset" if dataset else "model")


def find_hub_urls(text: str) -> list[HubUrl]:
    """Every hf:// and huggingface.co URL in `text` naming a model or a dataset (never a space)."""
    found = list(_hf_urls(text)) if "hf://" in text else []
    if "huggingface.co/" in text or "hf.co/" in text:
        found += list(_hub_urls(text))
    return found


def find_hf_urls(text: str, first_line: int, style: str, base: int | None = None) -> list[Found]:
    """hf:// and huggingface.co URLs in `text` (models and datasets), with their line numbers; with
    `base` (where `text` starts in the file) the revision's span too."""
    return [
        Found(first_line + text.count("\n", 0, u.at), u.repo, u.revision, u.style if style == "hf-url" else style,
              span=(base + u.span[0], base + u.span[1]) if base is not None and u.span else None,
              repo_type=u.repo_type)
        for u in find_hub_urls(text)
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


def _toml_mappings(value: Any, under: str | None = None) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Every table (inline ones too), with the snake-case key it sits under (a list's entries: the list's)."""
    if isinstance(value, dict):
        yield value, under
        for key, item in value.items():
            yield from _toml_mappings(item, norm_key(str(key)))
    elif isinstance(value, list):
        for item in value:
            yield from _toml_mappings(item, under)


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
    for mapping, under in _toml_mappings(data):
        repo_type = mapping.get("repo_type", "model")
        named = [(key, next((k for k in revision_keys(key) if k in mapping), None), repo_type) for key in MODEL_KEYS
                 if repo_type in ("model", "dataset")]
        named += [(key, rev_key, "dataset") for key, rev_key in dataset_keys(list(mapping), under)
                  if rev_key != AMBIGUOUS and looks_like_dataset(mapping[key] if isinstance(mapping[key], str) else None)]
        for key, rev_key, kind in named:
            repo = mapping.get(key)
            if not isinstance(repo, str) or repo.count("/") != 1 or "://" in repo:
                continue
            revision = mapping.get(rev_key) if rev_key else None
            line = _locate(lines, key, repo, used)
            span = None
            if rev_key and isinstance(revision, str) and line:
                span = _locate_value(lines, starts, line, rev_key, revision, taken)
            found.append(Found(line, repo, revision if isinstance(revision, str) else None, "toml",
                               dynamic=rev_key is not None and not isinstance(revision, str), span=span,
                               repo_type=kind))
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
