"""Speed of one estimate vs building the same configs on the meta device with transformers (targets: ≤1 ms, and the floor issue 32 set: ≥75×).

Two figures per config: `analyze()` alone, and the full estimate the tracker and `hubwatch estimate`
run per revision (`estimate_revision`: structure, parameters, the memory report at the default
settings, the largest batch per card and the cost). The targets apply to the full estimate.
Both sides start from the same config dict and end with the parameter count: transformers' side
is the config object built from the dict, the model built on the meta device and its parameters
counted (the build alone is shown too, and its ratio, which earlier runs of this benchmark reported).
Needs the optional `bench` extra (torch, transformers); the estimator itself never imports them.
"""

from __future__ import annotations

import statistics
import sys
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import track
from rich.table import Table

from benchmarks.estimator_truth import TruthRow, load_rows
from hubwatch.estimator import ESTIMATOR_VERSION, analyze, estimate_revision

TARGET_MS, TARGET_RATIO = 1.0, 75.0  # the ratio: a floor to hold (issue 32), not a target to push
RESULTS = Path(__file__).resolve().parent / "results" / "estimator_speed.md"
REPEATS = 200


def time_estimator(config: dict[str, Any]) -> float:
    samples = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        analyze(config)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def time_full_estimate(config: dict[str, Any]) -> float:
    """Median seconds of the full per-revision estimate (analysis, memory report, cards, cost)."""
    samples = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        estimate_revision(config)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def time_meta_build(row: TruthRow) -> tuple[float, float] | None:
    """Seconds for transformers to give the parameter count of the same config dict on the meta
    device (the config object built from the dict, the architecture class built under
    `torch.device("meta")`, its parameters counted), and of the build alone; None when transformers
    cannot build it. The first is what a meta-device estimate costs from the input ours starts from."""
    import torch
    import transformers

    cls = getattr(transformers, row.architecture, None)
    if cls is None or not row.native:
        return None
    data = {k: v for k, v in row.config.items() if k not in ("auto_map", "quantization_config")}
    kwargs = {k: v for k, v in data.items() if k != "model_type"}
    try:
        whole, build = [], []
        for _ in range(3):
            start = time.perf_counter()
            config = transformers.AutoConfig.for_model(data["model_type"], **kwargs)
            built = time.perf_counter()
            with torch.device("meta"):
                model = cls(config)
            done = time.perf_counter()
            sum(p.numel() for p in model.parameters())
            whole.append(time.perf_counter() - start)
            build.append(done - built)
        return statistics.median(whole), statistics.median(build)
    except Exception:  # a config this transformers version cannot build is left out of the comparison
        return None


def main() -> int:
    warnings.filterwarnings("ignore")
    console = Console(width=150)
    from benchmarks.bench_extra import missing_bench_extra

    if (status := missing_bench_extra("estimator_speed", "torch", "transformers")) is not None:
        return status
    import transformers as tf
    tf.logging.set_verbosity_error()
    rows = load_rows()
    est: dict[str, float] = {}
    full: dict[str, float] = {}
    meta: dict[str, float] = {}
    build_only: dict[str, float] = {}
    for row in track(rows, description="timing", console=console):
        est[row.hf_id] = time_estimator(row.config)
        full[row.hf_id] = time_full_estimate(row.config)
        built = time_meta_build(row)
        if built is not None:
            meta[row.hf_id], build_only[row.hf_id] = built
    table = Table(title=f"hubwatch estimator {ESTIMATOR_VERSION}: time per estimate")
    columns = ("model", "analyze ms", "full estimate ms", "meta: config, build, count ms", "meta: build alone ms",
               "ratio (full)")
    for col in columns:
        table.add_column(col, justify="left" if col == "model" else "right")
    md = ["| " + " | ".join(columns) + " |", "|---|---:|---:|---:|---:|---:|"]
    for row in rows:
        a, e, m, b = est[row.hf_id] * 1e3, full[row.hf_id] * 1e3, meta.get(row.hf_id), build_only.get(row.hf_id)
        cells = (row.hf_id, f"{a:.3f}", f"{e:.3f}", f"{m * 1e3:.1f}" if m else "—", f"{b * 1e3:.1f}" if b else "—",
                 f"{m * 1e3 / e:,.0f}×" if m else "—")
        table.add_row(*cells)
        md.append("| " + " | ".join(cells) + " |")
    analyze_ms = statistics.median(est.values()) * 1e3
    median_ms = statistics.median(full.values()) * 1e3
    both = [k for k in meta]
    ratio = statistics.median(meta[k] for k in both) / statistics.median(full[k] for k in both)
    analyze_ratio = statistics.median(meta[k] for k in both) / statistics.median(est[k] for k in both)
    build_ratio = statistics.median(build_only[k] for k in both) / statistics.median(full[k] for k in both)
    console.print(table)
    summary = (f"median {median_ms:.3f} ms per full estimate (analyze() alone {analyze_ms:.3f} ms) over {len(full)} "
               f"configs; transformers on the meta device (config from the dict, build, parameter count) median "
               f"{statistics.median(meta.values()) * 1e3:.1f} ms over {len(both)} configs; ratio {ratio:,.0f}× for the "
               f"full estimate ({analyze_ratio:,.0f}× for analyze(); against the build alone, as this benchmark "
               f"timed before: {build_ratio:,.0f}×)")
    console.print(summary)
    ok = median_ms <= TARGET_MS and ratio >= TARGET_RATIO
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        f"# Estimator speed\n\nRun `python -m benchmarks.estimator_speed` (estimator {ESTIMATOR_VERSION}, "
        f"transformers {tf.__version__}, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; shared 2-core machine).\n\n"
        f"**{summary}.** Targets: ≤{TARGET_MS} ms and ≥{TARGET_RATIO:.0f}× — {'met' if ok else 'NOT met'}.\n\n"
        + "\n".join(md) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
