"""What every report format of `hubwatch check` shares: one checked run, where each pin's revision is
written (line and column), a fingerprint that survives edits around it, the web app's links, and the
escaping of text that came from elsewhere (advisory summaries, paths) into Markdown."""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from hubwatch.domain.records import Severity
from hubwatch.pincheck.pins import Pin
from hubwatch.pincheck.pins_text import line_starts
from hubwatch.pincheck.report import Gate, PinReport, gate

__all__ = ["FORMATS", "CheckedRun", "Move", "Region", "advisory_url", "compare_link", "fingerprints", "md_code",
           "md_text", "pin_label"]

FORMATS = ("table", "json", "sarif", "github", "junit", "markdown")


@dataclass(frozen=True)
class Region:
    """Where a pin's revision is written in its file: 1-based line, and columns in code points
    (end exclusive); `column` is None when the revision is not written plainly (computed, absent)."""

    line: int
    column: int | None = None
    end_column: int | None = None
    # the same columns in UTF-16 code units (SARIF's default columnKind; a character past U+FFFF counts 2)
    column16: int | None = None
    end_column16: int | None = None


@dataclass(frozen=True)
class Move:
    """A pin `check --fix` rewrote: its report as scanned, and the commit it now names."""

    report: PinReport
    new: str

    @property
    def resolves(self) -> tuple[str, ...]:
        return self.report.suggestion.resolves if self.report.suggestion else ()


@dataclass(frozen=True)
class CheckedRun:
    """One `hubwatch check`: the pins as reported (after `--fix` wrote, as they stand then), the
    gate's settings, the scanned root and the web app whose pages the report links."""

    reports: tuple[PinReport, ...]
    threshold: Severity
    strict: bool
    root: Path
    web_url: str | None = None
    skipped: tuple[tuple[str, str], ...] = ()
    base: Path | None = None  # paths are written relative to this (default: the working folder)
    moves: tuple[Move, ...] = ()  # what `--fix` wrote (the reports are then the pins as they stand after it)
    _texts: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)

    def verdict(self, report: PinReport) -> Gate:
        return gate(report, self.threshold, self.strict)

    @property
    def failing(self) -> list[PinReport]:
        return [r for r in self.reports if self.verdict(r).fails]

    def uri(self, pin: Pin) -> str:
        """The pin's file as a relative URI: from the working folder (a repository's root in CI) when
        the scanned root is inside it, else from the scanned root."""
        folder = self.root if self.root.is_dir() else self.root.parent
        full = (folder / pin.path).resolve()
        base = (self.base or Path.cwd()).resolve()
        try:
            return full.relative_to(base).as_posix()
        except ValueError:
            return pin.path

    def _text(self, pin: Pin) -> str | None:
        if pin.path not in self._texts:
            folder = self.root if self.root.is_dir() else self.root.parent
            try:
                self._texts[pin.path] = (folder / pin.path).read_bytes().decode("utf-8", errors="replace")
            except OSError:
                self._texts[pin.path] = None
        return self._texts[pin.path]

    def region(self, pin: Pin) -> Region:
        """The line and columns of the revision string in the file (a notebook's: in its JSON text)."""
        text = self._text(pin) if pin.span is not None else None
        if text is None or pin.span is None:
            return Region(pin.line if pin.cell is None else 1)
        starts = line_starts(text)
        start, end = pin.span
        line = bisect_right(starts, start)
        column = start - starts[line - 1] + 1
        before16 = len(text[starts[line - 1]:start].encode("utf-16-le")) // 2
        width16 = len(text[start:end].encode("utf-16-le")) // 2
        return Region(line, column, column + (end - start), before16 + 1, before16 + 1 + width16)


def pin_label(pin: Pin) -> str:
    """`org/name@rev` (`datasets/org/name@rev` for a dataset) with a commit shortened to 12 digits
    (`org/name@—` for an unpinned use)."""
    revision = (pin.revision or "")[:12] if pin.kind == "commit" else (pin.revision or "—")
    return f"{pin.name}@{revision}"


def fingerprints(run: CheckedRun) -> dict[int, str]:
    """A fingerprint per report (by position) from the file, the model repo and the pin's text — not
    its line, so code scanning keeps one alert as lines move around it; repeats of the same pin in one
    file are told apart by their order."""
    seen: dict[tuple[str, str, str], int] = {}
    out: dict[int, str] = {}
    for k, r in enumerate(run.reports):
        key = (run.uri(r.pin), r.pin.name.lower(), r.pin.revision or "")  # a model's is its repo key
        n = seen.get(key, 0)
        seen[key] = n + 1
        out[k] = hashlib.sha256("\0".join([*key, str(n)]).encode("utf-8")).hexdigest()[:32]
    return out


def advisory_url(web_url: str | None, advisory_id: str) -> str | None:
    """The web app's page of one advisory, when a web app is known."""
    return f"{web_url.rstrip('/')}/advisories/{quote(advisory_id, safe='')}" if web_url else None


def compare_link(web_url: str | None, report: PinReport) -> str | None:
    """The web app's compare page from the pin to its suggested commit (`/models/ORG/NAME/compare/BASE...HEAD`,
    `/datasets/ORG/NAME/…` for a dataset pin)."""
    if not web_url or report.suggestion is None or not report.commit:
        return None
    return (f"{web_url.rstrip('/')}{report.pin.repo.page_path}/compare/"
            f"{report.commit[:12]}...{report.suggestion.commit[:12]}")


# CommonMark lets a backslash escape any ASCII punctuation. Escaping these leaves no link or image, autolink
# (`:`), emphasis, code span, HTML tag or entity, table cell or heading in text that came from an advisory
# record or a file name; the text is never put at the start of a line, where `-`, `+` or `1.` would matter.
_MD_PUNCT = re.compile(r"([\\`*_{}\[\]<>()#+!|~&:@])")
_SPACES = re.compile(r"\s+")
_CONTROLS = re.compile("[\x00-\x08\x0e-\x1f\x7f]")


def md_text(text: str) -> str:
    """`text` as literal Markdown on one line: punctuation escaped, runs of whitespace (newlines too) one
    space, control characters dropped, and `@` kept from mentioning anyone (a word joiner after it)."""
    flat = _SPACES.sub(" ", _CONTROLS.sub("", text)).strip()
    return _MD_PUNCT.sub(r"\\\1", flat).replace("\\@", "\\@\u2060")


def md_code(text: str) -> str:
    """`text` as an inline code span (a fence longer than any run of backticks in it), on one line."""
    flat = _SPACES.sub(" ", _CONTROLS.sub("", text)).strip()
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"
