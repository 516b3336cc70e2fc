"""Start-up time of whole `hubwatch` processes against bare Python and `import click, rich`.

Targets: `hubwatch --help` ≤ 2× and `hubwatch estimate CONFIG` (a bundled config, no hub) ≤ 3×
`python -c "import click, rich"` (best of N, whole processes, the same interpreter, one run).
Every process runs with bytecode caching on (PYTHONDONTWRITEBYTECODE dropped from its environment),
so the warm-up run leaves hubwatch's modules compiled, as an installed wheel has them: click and rich
are read from their installed bytecode, and hubwatch compiling its sources on every run (a checkout
with PYTHONDONTWRITEBYTECODE set) would be timed against them otherwise.
Run: `python -m benchmarks.startup [N] [--instructions]` (writes benchmarks/results/startup.md).

Wall times move with the machine's load (two shared CPUs run other work here). `--instructions`
also counts each command's instructions under valgrind (`cachegrind`, no cache simulation,
PYTHONHASHSEED=0), one run each: a figure load does not move, for comparing two trees on a busy
machine; the targets are judged on the wall times.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["count_instructions", "main", "time_process"]

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results" / "startup.md"
CONFIG = ROOT / "tests" / "data" / "configs" / "openai-community__gpt2" / "config.json"
TARGET = 2.0
ESTIMATE_TARGET = 3.0
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: bytecode kept
RUNS = 15


def time_process(argv: list[str], runs: int) -> tuple[float, float]:
    """Best and median wall time (s) of `runs` runs of `argv`, after one warm-up run."""
    subprocess.run(argv, check=True, capture_output=True, cwd=ROOT, env=ENV)
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, cwd=ROOT, env=ENV)
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def count_instructions(argv: list[str]) -> int:
    """Instructions one run of `argv` executes, counted by valgrind's cachegrind (after a warm-up run)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    subprocess.run(argv, check=True, capture_output=True, cwd=ROOT, env=ENV)
    done = subprocess.run([valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *argv],
                          check=True, capture_output=True, text=True, cwd=ROOT, env={**ENV, "PYTHONHASHSEED": "0"})
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise SystemExit(f"valgrind printed no instruction count for {argv}: {done.stderr[-500:]}")
    return int(found.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    instructions = "--instructions" in args
    args = [a for a in args if a != "--instructions"]
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
    estimate_ratio = figures[f"hubwatch estimate {CONFIG.relative_to(ROOT)}"][0] / base
    lines = ["# start-up", "", f"`python -m benchmarks.startup` — whole processes, best / median of {runs}, one run", "",
             "| command | best | median | × import click, rich | × python -c pass |", "|---|---|---|---|---|"]
    for name, (best, median) in figures.items():
        lines.append(f"| `{name}` | {best * 1000:.0f} ms | {median * 1000:.0f} ms | {best / base:.2f} | {best / bare:.1f} |")
    verdict = "met" if ratio <= TARGET else "NOT met"
    estimate_verdict = "met" if estimate_ratio <= ESTIMATE_TARGET else "NOT met"
    lines += ["", f"`hubwatch --help` is {ratio:.2f}× `import click, rich` (target ≤ {TARGET:.0f}×: {verdict}).",
              f"`hubwatch estimate` is {estimate_ratio:.2f}× `import click, rich` (target ≤ {ESTIMATE_TARGET:.0f}×: "
              f"{estimate_verdict}).", ""]
    if instructions:
        counts = {name: count_instructions(cmd) for name, cmd in cases}
        base_count = counts['python -c "import click, rich"']
        lines += ["Instructions (valgrind cachegrind, one run each; load does not move them):", "",
                  "| command | instructions | × import click, rich |", "|---|---|---|"]
        lines += [f"| `{name}` | {n / 1e6:,.1f} M | {n / base_count:.2f} |" for name, n in counts.items()]
        lines.append("")
    text = "\n".join(lines)
    print(text)
    RESULTS.write_text(text)
    return 0 if ratio <= TARGET and estimate_ratio <= ESTIMATE_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
