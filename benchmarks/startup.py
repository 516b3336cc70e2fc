"""Start-up time of whole `hubwatch` processes against bare Python and `import click, rich`.

Target: `hubwatch --help` ≤ 2× `python -c "import click, rich"` (best of N, whole processes, the
same interpreter, one run). `hubwatch estimate CONFIG` (a bundled config, no hub) is shown too.
Run: `python -m benchmarks.startup [N]` (writes benchmarks/results/startup.md).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["main", "time_process"]

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results" / "startup.md"
CONFIG = ROOT / "tests" / "data" / "configs" / "openai-community__gpt2" / "config.json"
TARGET = 2.0
RUNS = 15


def time_process(argv: list[str], runs: int) -> tuple[float, float]:
    """Best and median wall time (s) of `runs` runs of `argv`, after one warm-up run."""
    subprocess.run(argv, check=True, capture_output=True, cwd=ROOT)
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, cwd=ROOT)
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    runs = int(args[0]) if args else RUNS
    py = sys.executable
    cases = [
        ("python -c pass", [py, "-c", "pass"]),
        ('python -c "import click, rich"', [py, "-c", "import click, rich"]),
        ("hubwatch --help", [py, "-m", "hubwatch", "--help"]),
        (f"hubwatch estimate {CONFIG.relative_to(ROOT)}", [py, "-m", "hubwatch", "estimate", str(CONFIG)]),
    ]
    figures = {name: time_process(cmd, runs) for name, cmd in cases}
    base = figures['python -c "import click, rich"'][0]
    bare = figures["python -c pass"][0]
    ratio = figures["hubwatch --help"][0] / base
    lines = ["# start-up", "", f"`python -m benchmarks.startup` — whole processes, best / median of {runs}, one run", "",
             "| command | best | median | × import click, rich | × python -c pass |", "|---|---|---|---|---|"]
    for name, (best, median) in figures.items():
        lines.append(f"| `{name}` | {best * 1000:.0f} ms | {median * 1000:.0f} ms | {best / base:.2f} | {best / bare:.1f} |")
    verdict = "met" if ratio <= TARGET else "NOT met"
    lines += ["", f"`hubwatch --help` is {ratio:.2f}× `import click, rich` (target ≤ {TARGET:.0f}×: {verdict}).", ""]
    text = "\n".join(lines)
    print(text)
    RESULTS.write_text(text)
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
