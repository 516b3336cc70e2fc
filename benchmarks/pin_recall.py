"""Pin recall on real code: the scanner over public files that pin Hugging Face revisions.

`benchmarks/data/pins_corpus/` holds real public files (trimmed to the part that pins) and
MANIFEST.json, the pins each one holds, read by hand: the repo, the revision, the line and whether
it is a commit (pinned-sha), a branch or tag (moving) or computed at run time (unknown). The scanner
is run over the folder and each expected pin is looked for in its file:

- commit pins found with the right repo and revision (recall);
- moving refs reported as moving (unpinned), unknown ones reported unknown (dynamic);
- wrong attributions: a reported commit pin whose repo and revision the file does not pin (a
  revision given to another model), or an expected pin reported with another status. Must be 0.

Run: `python -m benchmarks.pin_recall` (prints a table, writes benchmarks/results/pin_recall.json).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from hubwatch.pincheck.pins import Pin, scan_path

CORPUS = Path(__file__).parent / "data" / "pins_corpus"
RESULTS = Path(__file__).parent / "results" / "pin_recall.json"
_KIND = {"pinned-sha": "commit", "moving": "unpinned", "unknown": "dynamic"}


@dataclass
class Recall:
    files: int = 0
    expected: dict[str, int] = field(default_factory=lambda: {k: 0 for k in _KIND})
    found: dict[str, int] = field(default_factory=lambda: {k: 0 for k in _KIND})
    lines_right: int = 0
    wrong: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    @property
    def commit_recall(self) -> float:
        return self.found["pinned-sha"] / self.expected["pinned-sha"] if self.expected["pinned-sha"] else 1.0


def _matches(pin: Pin, want: dict[str, object]) -> bool:
    if pin.repo.key != str(want["repo"]).lower():
        return False
    if want["status"] == "unknown":
        return pin.kind == "dynamic"
    return (pin.revision or "").lower() == str(want["revision"]).lower()


def measure(corpus: Path = CORPUS) -> Recall:
    manifest = json.loads((corpus / "MANIFEST.json").read_text(encoding="utf-8"))
    report = scan_path(corpus)
    out = Recall(files=len(manifest["files"]))
    for entry in manifest["files"]:
        pins = [p for p in report.pins if p.path == entry["file"]]
        used: set[int] = set()
        for want in entry["expected"]:
            status = str(want["status"])
            out.expected[status] += 1
            hit = next((k for k, p in enumerate(pins) if k not in used and _matches(p, want)
                        and p.line == want["line"]), None)
            if hit is None:
                hit = next((k for k, p in enumerate(pins) if k not in used and _matches(p, want)), None)
            if hit is None:
                out.missed.append(f"{entry['file']}:{want['line']} {want['repo']}@{want['revision']} ({status})")
                continue
            used.add(hit)
            pin = pins[hit]
            if pin.kind == _KIND[status] or (status == "moving" and pin.kind == "ref"):
                out.found[status] += 1
                out.lines_right += pin.line == want["line"]
            else:
                out.wrong.append(f"{pin.where} {pin.repo}@{pin.revision}: reported {pin.kind}, is {status}")
        expected = {(str(w["repo"]).lower(), str(w["revision"]).lower()) for w in entry["expected"]}
        for k, pin in enumerate(pins):
            if k not in used and pin.kind == "commit" and (pin.repo.key, (pin.revision or "").lower()) not in expected:
                out.wrong.append(f"{pin.where} {pin.repo}@{pin.revision}: the file pins no such revision of it")
    return out


def main() -> None:
    result = measure()
    console = Console()
    table = Table(title=f"pin recall on {result.files} real files ({CORPUS.relative_to(Path.cwd()) if CORPUS.is_relative_to(Path.cwd()) else CORPUS})")
    table.add_column("expected status")
    table.add_column("expected", justify="right")
    table.add_column("reported so", justify="right")
    table.add_column("share", justify="right")
    for status in _KIND:
        n, k = result.expected[status], result.found[status]
        table.add_row(status, str(n), str(k), f"{k / n:.0%}" if n else "-")
    total = sum(result.found.values())
    table.add_row("wrong attributions", "0 allowed", str(len(result.wrong)), "")
    console.print(table)
    console.print(f"commit recall {result.commit_recall:.1%}; {result.lines_right} of {total} found on the expected line")
    for line in result.missed:
        console.print(f"  missed: {line}")
    for line in result.wrong:
        console.print(f"  [red]wrong:[/red] {line}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({**asdict(result), "commit_recall": result.commit_recall}, indent=1) + "\n",
                       encoding="utf-8")


if __name__ == "__main__":
    main()
