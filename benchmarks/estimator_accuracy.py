"""Accuracy of the derived parameter count against tests/data/configs/truth.tsv (target: ≥95% within 1%)."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.estimator_truth import load_rows
from hubwatch.estimator import ESTIMATOR_VERSION, analyze

TARGET_WITHIN_1PCT = 0.95
RESULTS = Path(__file__).resolve().parent / "results" / "estimator_accuracy.md"
DEFAULTS = Path(__file__).resolve().parent.parent / "tests" / "estimator" / "transformers_defaults.json"


def main() -> int:
    console = Console(width=150)
    table = Table(title=f"hubwatch estimator {ESTIMATOR_VERSION}: derived parameters vs truth")
    for col in ("model", "family", "truth", "derived", "error %", "truth source"):
        table.add_column(col, justify="right" if col in ("truth", "derived", "error %") else "left")
    md = ["| model | family | truth | derived | error % | truth source |", "|---|---|---:|---:|---:|---|"]
    errors: list[float] = []
    custom_misses: list[str] = []
    for row in load_rows():
        a = analyze(row.config)
        derived = a.params.derived
        if row.truth is None:
            cells = (row.hf_id, a.family, "—", f"{derived:,}", "—", "none (custom code, not judged)")
        else:
            err = 100.0 * (derived - row.truth) / row.truth
            errors.append(err)
            if a.custom_code and row.source == "published_total" and abs(err) > 1:
                custom_misses.append(row.hf_id)
            cells = (row.hf_id, a.family, f"{row.truth:,}", f"{derived:,}", f"{err:+.3f}", row.source)
        style = None if row.truth is None or abs(errors[-1]) <= 1 else "red"
        table.add_row(*cells, style=style)
        md.append("| " + " | ".join(cells) + " |")
    n = len(errors)
    within1 = sum(abs(e) <= 1 for e in errors) / n
    within5 = sum(abs(e) <= 5 for e in errors) / n
    exact = sum(e == 0 for e in errors)
    console.print(table)
    summary = (f"{n} judged configs: {within1:.1%} within 1%, {within5:.1%} within 5%, {exact} exact; "
               f"custom-code configs with a published total outside 1%: {len(custom_misses)}")
    console.print(summary)
    ok = within1 >= TARGET_WITHIN_1PCT and not custom_misses
    extra_summary, extra_md = _defaults_section(console)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        f"# Estimator accuracy\n\nRun `python -m benchmarks.estimator_accuracy` "
        f"(estimator {ESTIMATOR_VERSION}, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC).\n\n"
        f"**{summary}.** Target: ≥{TARGET_WITHIN_1PCT:.0%} within 1% — {'met' if ok else 'NOT met'}.\n\n"
        + "\n".join(md) + "\n\n" + f"## transformers default configs\n\n{extra_summary}.\n\n" + "\n".join(extra_md) + "\n")
    return 0 if ok else 1


def _defaults_section(console: Console) -> tuple[str, list[str]]:
    """Secondary check: one default config per model type, counted by transformers on the meta device."""
    data = json.loads(DEFAULTS.read_text())
    md = ["| model type | class | transformers | derived | error % |", "|---|---|---:|---:|---:|"]
    errors = []
    for row in data["rows"]:
        derived = analyze(row["config"]).params.derived
        err = 100.0 * (derived - row["params"]) / row["params"]
        errors.append(err)
        md.append(f"| {row['model_type']} | {row['architecture']} | {row['params']:,} | {derived:,} | {err:+.3f} |")
    n = len(errors)
    summary = (f"{n} default configs (transformers {data['transformers']}): {sum(abs(e) <= 1 for e in errors) / n:.1%} "
               f"within 1%, {sum(abs(e) <= 5 for e in errors) / n:.1%} within 5%, {sum(e == 0 for e in errors)} exact")
    console.print(summary)
    return summary, md


if __name__ == "__main__":
    sys.exit(main())
