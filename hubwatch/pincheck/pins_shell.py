"""Pin finder for shell scripts and Dockerfiles: words and variables as a shell reads them, never run."""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Callable, Mapping, Sequence

from hubwatch.pincheck.pins_shwords import Reader, Script, Word, cut, logical_lines
from hubwatch.pincheck.pins_text import (
    AMBIGUOUS, DYN, Found, Value, dataset_keys, find_hub_urls, line_starts, looks_like_dataset, looks_like_repo, pair_keys,
)

__all__ = ["Script", "scan_notebook_shell", "scan_shell"]

_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_DOCKER = frozenset({"FROM", "RUN", "CMD", "ENTRYPOINT", "ARG", "ENV", "COPY", "ADD", "WORKDIR", "LABEL", "EXPOSE",
                     "USER", "VOLUME", "SHELL", "HEALTHCHECK", "ONBUILD", "STOPSIGNAL", "MAINTAINER"})
_EXEC_FORM = re.compile(r'"((?:[^"\\]|\\.)*)"')
_DECLARE = frozenset({"export", "local", "readonly", "declare", "typeset"})
_PREFIX = frozenset({"sudo", "exec", "env", "time", "nohup", "command"})
# Options naming the model a server or script loads, and its revision (vLLM, TGI, SGLang, scripts).
_MODEL_OPTS = ("--model", "--model-id", "--model_id", "--model-path", "--model_path", "--model-name-or-path",
               "--model_name_or_path", "--pretrained-model-name-or-path", "--pretrained_model_name_or_path")
_REV_OPTS = ("--revision", "--model-revision", "--model_revision")
_TOK_OPTS = ("--tokenizer", "--tokenizer-name", "--tokenizer_name")
_TOK_REV_OPTS = ("--tokenizer-revision", "--tokenizer_revision")
_SERVERS = ("vllm", "text-generation-launcher", "text-generation-inference", "sglang", "lmdeploy", "tgi")
_CLI_VALUED = frozenset({"--revision", "--repo-type", "--repo_type", "--local-dir", "--cache-dir", "--token", "--max-workers",
                         "--local-dir-use-symlinks", "--include", "--exclude"})


def _option(words: Sequence[Word], names: Sequence[str]) -> Word | None:
    """The value of `--opt value` or `--opt=value` (the last one given)."""
    found = None
    for k, word in enumerate(words):
        text = word.value.text
        if text in names and k + 1 < len(words):
            found = words[k + 1]
        elif "=" in text and text.split("=", 1)[0] in names:
            found = Word(cut(word.value, text.index("=") + 1), word.at)
    return found


class _Pins:
    """Turns a script's commands into findings."""

    def __init__(self, script: Script, line_of: Callable[[int], int], style: str = "cli") -> None:
        self.script, self.line_of, self.style = script, line_of, style
        self.found: list[Found] = []

    def add(self, repo: Word, revision: Word | None, style: str | None = None, repo_type: str = "model") -> None:
        text = repo.value.text
        if not looks_like_repo(text):
            return  # a local path, or a repo computed at run time: nothing we can name
        self.script.used |= repo.value.names
        rev = revision.value if revision is not None else None
        dynamic = rev is not None and (rev.is_dynamic or not rev.text)
        self.found.append(Found(self.line_of(repo.at), text, None if rev is None or dynamic else rev.text,
                                style or self.style, dynamic, span=None if rev is None or dynamic else rev.span,
                                repo_span=repo.value.span, repo_type=repo_type))
        if rev is not None:
            self.script.used |= rev.names

    def command(self, words: list[Word], docker_exec: bool = False) -> None:
        while words and _ASSIGN.match(words[0].value.text) and not docker_exec:
            words = words[1:]
        while words and words[0].value.text in _PREFIX:
            words = words[1:]
        names = [w.value.text.rsplit("/", 1)[-1] for w in words]
        for k, name in enumerate(names[:-1]):
            if name in ("huggingface-cli", "hf") and names[k + 1] == "download":
                self._download(words[k + 2:])
            if re.fullmatch(r"python[0-9.]*", name) and names[k + 1] == "-c" and k + 2 < len(words):
                self._python(words[k + 2])
        if any(any(s in n for s in _SERVERS) for n in names) or _option(words, _REV_OPTS) is not None:
            self._server(words, names)
        for word in words:
            self._urls(word)

    def _download(self, rest: list[Word]) -> None:
        texts = [w.value.text for w in rest]
        repo, k = None, 0
        while k < len(rest):
            if texts[k].startswith("-"):
                k += 2 if texts[k] in _CLI_VALUED else 1
                continue
            repo = rest[k]
            break
        option = _option(rest, ("--repo-type", "--repo_type"))
        repo_type = "model" if option is None else option.value.text
        if repo is None or repo_type not in ("model", "dataset"):
            return  # a space, or a repo type computed at run time
        self.add(repo, _option(rest, ("--revision",)), repo_type=repo_type)

    def _server(self, words: list[Word], names: list[str]) -> None:
        model = _option(words, _MODEL_OPTS)
        if model is None and "serve" in names and names.index("serve") + 1 < len(words):
            after = words[names.index("serve") + 1]
            model = after if not after.value.text.startswith("-") else None
        if model is None:
            return
        self.add(model, _option(words, _REV_OPTS))
        tok_rev = _option(words, _TOK_REV_OPTS)
        tokenizer = _option(words, _TOK_OPTS)
        if tok_rev is not None or (tokenizer is not None and tokenizer.value.text != model.value.text):
            self.add(tokenizer or model, tok_rev)

    def _python(self, code: Word) -> None:
        from hubwatch.pincheck.pins_python import scan_python  # the -c program, read as Python (never run)

        text = code.value.text
        found, _ = scan_python(text)
        for f in found:
            dynamic = f.dynamic or (f.revision is not None and DYN in f.revision)
            if DYN in f.repo:
                continue
            span = code.value.span_of(*f.span) if f.span and not dynamic else None
            self.found.append(Found(self.line_of(code.at), f.repo, None if dynamic else f.revision, f.style,
                                    dynamic, span=span, repo_type=f.repo_type))

    def _urls(self, word: Word) -> None:
        for url in find_hub_urls(word.value.text):
            if DYN in url.repo:
                continue
            rev = url.revision
            dynamic = rev is not None and DYN in rev
            where = word.value.span_of(*url.span) if url.span and not dynamic else None
            self.found.append(Found(self.line_of(word.at), url.repo, None if dynamic else rev, url.style, dynamic,
                                    span=where, repo_type=url.repo_type))


def _assign(script: Script, word: Word, line_at: int) -> None:
    match = _ASSIGN.match(word.value.text)
    if match:
        value = cut(word.value, match.end())
        script.env[match.group(1)] = value
        script.assigned[match.group(1)] = (value, line_at)


def _docker_line(kind: str, reader: Reader, body: int, end: int, pins: _Pins, script: Script) -> None:
    words = [w for c in reader.words(body, end) for w in c]
    if kind == "ARG":
        for w in words:
            if _ASSIGN.match(w.value.text):
                _assign(script, w, w.at)
            elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", w.value.text) and w.value.text not in script.env:
                script.env[w.value.text] = Value.dynamic(frozenset({w.value.text}))  # a build argument
    elif kind == "ENV":
        if words and not _ASSIGN.match(words[0].value.text) and len(words) > 1:  # ENV NAME value (old form)
            rest = words[1].value
            for w in words[2:]:
                rest = rest + Value.of(" ") + w.value
            _assign(script, Word(Value.of(words[0].value.text + "=") + rest, words[0].at), words[0].at)
        for w in words:
            if _ASSIGN.match(w.value.text):
                _assign(script, w, w.at)
    elif kind in ("CMD", "ENTRYPOINT", "RUN") and reader.s[body:end].lstrip().startswith("["):
        exec_words = [Word(reader._lit(body + m.start(1), body + m.end(1)), reader.pos[body + m.start(1)])
                      for m in _EXEC_FORM.finditer(reader.s[body:end])]
        pins.command(exec_words, docker_exec=True)
    elif kind in ("CMD", "ENTRYPOINT", "RUN"):
        _shell_commands(reader.words(body, end), pins, script)
    else:
        for w in words:
            pins._urls(w)


def _shell_commands(commands: list[list[Word]], pins: _Pins, script: Script) -> None:
    for words in commands:
        if words and words[0].value.text in _DECLARE:
            words = [w for w in words[1:] if not w.value.text.startswith("-")]
            for w in words:
                _assign(script, w, w.at)
            continue
        if words and all(_ASSIGN.match(w.value.text) for w in words):
            for w in words:
                _assign(script, w, w.at)
            continue
        pins.command(words)


def scan_shell(text: str, env: Mapping[str, Value] | None = None,
               file_at: Callable[[int], int | None] | None = None,
               line_of: Callable[[int], int] | None = None) -> tuple[list[Found], Script]:
    """Downloads and servers (`hf download`, `vllm serve`, `text-generation-launcher`, `--model … --revision …`),
    `python -c` programs and hub URLs, with variables followed through the script (Dockerfile ARG/ENV too).

    `env`: variables set before the script starts (a CI job's `env:`); `file_at` and `line_of` map an
    offset in `text` to the file's offset and line when `text` is embedded in another file.
    """
    starts = line_starts(text)

    def own_line(offset: int) -> int:
        return bisect_right(starts, offset)

    line_of = line_of or own_line
    script = Script(dict(env or {}))
    pins = _Pins(script, line_of)
    for s, pos in logical_lines(text):
        reader = Reader(s, pos, file_at or (lambda offset: offset), script)
        first = s.lstrip().split(" ", 1)[0]
        body = len(s) - len(s.lstrip()) + len(first)
        if first.upper() in _DOCKER and first.isupper():
            _docker_line(first.upper(), reader, body, len(s), pins, script)
        else:
            _shell_commands(reader.words(0, len(s)), pins, script)
    found = pins.found + pair_variables(script, line_of)
    return found, script


def pair_variables(script: Script, line_of: Callable[[int], int]) -> list[Found]:
    """A model (or a dataset) and its revision set in variables that no command read (`ARG MODEL_ID=…` /
    `ARG MODEL_REVISION=…`, `DATASET_ID=…` / `DATASET_REVISION=…`, read by a program of the image's own):
    one weak finding each (a stronger one of the same repo wins). A dataset named alone is no such pin."""
    found = []
    named = [(name, rev, "model") for name, rev in pair_keys(list(script.assigned)).items()]
    named += [(name, rev, "dataset") for name, rev in dataset_keys(list(script.assigned)) if rev is not None]
    for name, rev_name, kind in named:
        value, at = script.assigned[name]
        if rev_name == AMBIGUOUS or name in script.used or not looks_like_repo(value.text) \
                or (kind == "dataset" and not looks_like_dataset(value.text)):
            continue
        rev = script.assigned[rev_name][0] if rev_name else None
        dynamic = rev is not None and (rev.is_dynamic or not rev.text)
        found.append(Found(line_of(at), value.text, None if rev is None or dynamic else rev.text, "env", dynamic,
                           span=rev.span if rev is not None and not dynamic else None, repo_span=value.span,
                           weak=True, repo_type=kind))
    return found


def scan_notebook_shell(lines: Sequence[str]) -> list[Found]:
    """Shell escapes (`!hf download …`) in a notebook cell's lines (spans: offsets into the cell's code)."""
    text = "\n".join(line.lstrip()[1:] if line.lstrip().startswith("!") else "" for line in lines)
    shift = [len(line) - len(line.lstrip()) + 1 if line.lstrip().startswith("!") else 0 for line in lines]
    starts = line_starts("\n".join(lines))
    mine = line_starts(text)

    def file_at(offset: int) -> int:
        line = bisect_right(mine, offset) - 1
        return starts[line] + shift[line] + offset - mine[line]

    found, _ = scan_shell(text, file_at=file_at)
    return [f for f in found if f.style != "env"]
