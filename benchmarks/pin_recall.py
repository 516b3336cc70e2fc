"""Pin recall on real code: the scanner over public files that pin Hugging Face revisions.

`benchmarks/data/pins_corpus/` holds real public files (trimmed to the part that pins) and
MANIFEST.json, the pins each one holds, read by hand: the repo, its type (model, or dataset), the
revision, the line and whether it is a commit (pinned-sha), a branch or tag or no revision (moving)
or computed at run time (unknown). The scanner is run over the folder and each expected pin is
looked for in its file, models and datasets measured apart:

- commit pins found with the right repo, type and revision (recall);
- moving refs reported as moving (unpinned), unknown ones reported unknown (dynamic);
- wrong attributions: a reported commit pin whose repo and revision the file does not pin (a
  revision given to another repo), an expected pin reported with another status, or a model
  reported as a dataset or a dataset as a model (a type confusion, any status). Must be 0.

Run: `python -m benchmarks.pin_recall` (prints a table per type, writes benchmarks/results/pin_recall.json).
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
    confusions: int = 0  # of `wrong`: a model reported as a dataset, or a dataset as a model

    @property
    def commit_recall(self) -> float:
        return self.found["pinned-sha"] / self.expected["pinned-sha"] if self.expected["pinned-sha"] else 1.0


def _type(want: dict[str, object]) -> str:
    return str(want.get("type", "model"))


def _matches(pin: Pin, want: dict[str, object]) -> bool:
    if pin.repo.hub_id.lower() != str(want["repo"]).lower() or pin.repo_type != _type(want):
        return False
    if want["status"] == "unknown":
        return pin.kind == "dynamic"
    if want["status"] == "moving" and str(want["revision"]).lower() == "main" and pin.revision is None:
        return True  # no revision: whatever main is
    return (pin.revision or "").lower() == str(want["revision"]).lower()


def measure(corpus: Path = CORPUS, repo_type: str = "model") -> Recall:
    """Recall on the pins of one type (`model` or `dataset`) the corpus's files hold."""
    manifest = json.loads((corpus / "MANIFEST.json").read_text(encoding="utf-8"))
    report = scan_path(corpus)
    entries = [e for e in manifest["files"] if any(_type(w) == repo_type for w in e["expected"])]
    out = Recall(files=len(entries))
    for entry in manifest["files"]:
        pins = [p for p in report.pins if p.path == entry["file"]]
        mine = [w for w in entry["expected"] if _type(w) == repo_type]
        used: set[int] = set()
        for want in mine:
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
            if pin.kind == _KIND[status] or (status == "moving" and pin.kind in ("ref", "unpinned")):
                out.found[status] += 1
                out.lines_right += pin.line == want["line"]
            else:
                out.wrong.append(f"{pin.where} {pin.name}@{pin.revision}: reported {pin.kind}, is {status}")
        expected = {(str(w["repo"]).lower(), str(w["revision"]).lower()) for w in entry["expected"]}
        other = {str(w["repo"]).lower() for w in entry["expected"] if _type(w) != repo_type}
        for k, pin in enumerate(pins):
            if k in used or pin.repo_type != repo_type:
                continue
            if pin.repo.hub_id.lower() in other and pin.repo.hub_id.lower() not in {str(w["repo"]).lower() for w in mine}:
                out.confusions += 1
                out.wrong.append(f"{pin.where} {pin.name}: the file uses it as a {'model' if repo_type == 'dataset' else 'dataset'}")
            elif pin.kind == "commit" and (pin.repo.hub_id.lower(), (pin.revision or "").lower()) not in expected:
                out.wrong.append(f"{pin.where} {pin.name}@{pin.revision}: the file pins no such revision of it")
    return out


def _table(result: Recall, title: str) -> Table:
    table = Table(title=title)
    table.add_column("expected status")
    table.add_column("expected", justify="right")
    table.add_column("reported so", justify="right")
    table.add_column("share", justify="right")
    for status in _KIND:
        n, k = result.expected[status], result.found[status]
        table.add_row(status, str(n), str(k), f"{k / n:.0%}" if n else "-")
    table.add_row("wrong attributions", "0 allowed", str(len(result.wrong)), "")
    table.add_row("  of them model/dataset confusions", "0 allowed", str(result.confusions), "")
    return table


def main() -> None:
    console = Console()
    where = CORPUS.relative_to(Path.cwd()) if CORPUS.is_relative_to(Path.cwd()) else CORPUS
    results = {}
    for repo_type, label in (("model", "model pins"), ("dataset", "dataset pins")):
        result = results[repo_type] = measure(repo_type=repo_type)
        console.print(_table(result, f"{label}: recall on {result.files} real files ({where})"))
        total = sum(result.found.values())
        console.print(f"{label}: commit recall {result.commit_recall:.1%}; {result.lines_right} of {total} found on the "
                      "expected line")
        for line in result.missed:
            console.print(f"  missed: {line}")
        for line in result.wrong:
            console.print(f"  [red]wrong:[/red] {line}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({**asdict(results["model"]), "commit_recall": results["model"].commit_recall,
                                   "datasets": {**asdict(results["dataset"]),
                                                "commit_recall": results["dataset"].commit_recall}}, indent=1) + "\n",
                       encoding="utf-8")


if __name__ == "__main__":
    main()
