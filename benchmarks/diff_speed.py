"""Speed of diff_snapshots on the real histories, a large tokenizer.json and hostile templates.

Targets: median ≤ 20 ms per revision without a template change; ≤ 1000 ms per revision whose
chat template changed (old and new rendered on every fixed conversation); a 128k-entry
tokenizer.json re-upload diffed in ≤ 1000 ms (merges as strings, and as pairs); every hostile template
refused in ≤ 2500 ms.
Run: `python -m benchmarks.diff_speed` (writes benchmarks/results/diff_speed.md).
"""

from __future__ import annotations

import hashlib
import json
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import track
from rich.table import Table

from hubwatch.domain.records import FileRecord, Kind
from hubwatch.diff import diff_snapshots, render_chat_template
from hubwatch.diff.compile_worker import COMPILER
from hubwatch.domain.snapshot import Snapshot, is_tracked

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = [ROOT / "tests" / "data" / "histories", ROOT / "hubwatch" / "hubsim" / "demo"]
RESULTS = Path(__file__).resolve().parent / "results" / "diff_speed.md"
HOSTILE = [
    "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}",
    "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
    "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ 'x' * 10**9 }}",
]


def _snapshot(folder: Path) -> Snapshot:
    files, contents = {}, {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel, raw = path.relative_to(folder).as_posix(), path.read_bytes()
        files[rel] = FileRecord(rel, len(raw), content_sha256=hashlib.sha256(raw).hexdigest())
        if is_tracked(rel):
            contents[rel] = raw
    return Snapshot(sha=hashlib.sha1(str(folder).encode()).hexdigest(), files=files, contents=contents)


def start_compiler() -> float:
    """Milliseconds to start the chat-template compile child (once per process, before the first
    render; the daemon pays it once), so that the per-revision figures time the diff alone."""
    start = time.perf_counter()
    COMPILER.warm()
    return (time.perf_counter() - start) * 1000


def bench_histories() -> tuple[list[float], list[float]]:
    plain: list[float] = []
    templated: list[float] = []
    histories = [h for root in FOLDERS for h in sorted(root.iterdir()) if (h / "HISTORY.tsv").exists()]
    for history in track(histories, description="replaying histories"):
        versions = sorted((p for p in history.iterdir() if p.is_dir()), key=lambda p: int(p.name[1:]))
        snapshots = [_snapshot(v) for v in versions]
        for old, new in zip(snapshots, snapshots[1:]):
            start = time.perf_counter()
            changes = diff_snapshots(old, new)
            elapsed = (time.perf_counter() - start) * 1000
            (templated if any(c.kind is Kind.CHAT_TEMPLATE for c in changes) else plain).append(elapsed)
    return plain, templated


def bench_tokenizer_json(vocab: int = 128_000, pairs: bool = False) -> float:
    """Milliseconds to diff a re-uploaded tokenizer.json; `pairs`: merges as [left, right] lists, as
    tokenizers 0.20 and later write them (Llama 3, Qwen 2.5), else as "left right" strings."""
    merges: list[Any] = [[f"a{i}", f"b{i}"] if pairs else f"a{i} b{i}" for i in range(vocab)]

    def doc(extra: str) -> bytes:
        return json.dumps({
            "model": {"type": "BPE", "vocab": {f"tok{i}": i for i in range(vocab)}, "merges": merges},
            "added_tokens": [{"id": vocab + i, "content": f"<|r{i}{extra}|>", "special": True} for i in range(256)],
            "normalizer": None, "pre_tokenizer": {"type": "ByteLevel"}, "post_processor": None, "decoder": None,
        }).encode()  # fmt: skip

    old = Snapshot("a" * 40, {}, {"tokenizer.json": doc("")})
    new = Snapshot("b" * 40, {}, {"tokenizer.json": doc("x")})
    start = time.perf_counter()
    diff_snapshots(old, new)
    return (time.perf_counter() - start) * 1000


def bench_hostile() -> float:
    worst = 0.0
    for template in HOSTILE:
        start = time.perf_counter()
        result = render_chat_template(template, [{"role": "user", "content": "x"}])
        assert not result.ok
        worst = max(worst, (time.perf_counter() - start) * 1000)
    return worst


def main() -> int:
    started = start_compiler()
    plain, templated = bench_histories()
    rows = [
        (f"revision without template change (median of {len(plain)})", statistics.median(plain), 20.0),
        (f"revision with template change (max of {len(templated)})", max(templated), 1000.0),
        ("tokenizer.json 128k vocab re-upload", bench_tokenizer_json(), 1000.0),
        ("tokenizer.json 128k vocab re-upload, merges as pairs", bench_tokenizer_json(pairs=True), 1000.0),
        (f"hostile template refused (worst of {len(HOSTILE)})", bench_hostile(), 2500.0),
    ]
    table = Table(title="diff_snapshots speed")
    for column in ("measure", "ms", "target ms"):
        table.add_column(column, justify="left" if column == "measure" else "right")
    for name, value, target in rows:
        table.add_row(name, f"{value:.1f}", f"≤ {target:.0f}")
    Console().print(table)
    print(f"compile child started in {started:.0f} ms (once per process, before the timed diffs)")
    met = all(value <= target for _, value, target in rows)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# diff speed", "",
        f"Measured {when} with `python -m benchmarks.diff_speed` (shared 2-core machine).", "",
        "| measure | value | target |", "|---|---:|---:|",
        *(f"| {name} | {value:.1f} ms | ≤ {target:.0f} ms |" for name, value, target in rows),
        "", f"Targets met: {'yes' if met else 'no'}. The chat-template compile child was started first "
        f"({started:.0f} ms, once per process), so the revisions time the diff alone.", "",
    ]  # fmt: skip
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
