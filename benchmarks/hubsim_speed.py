"""Speed of the hub emulator through huggingface_hub (targets: load ≤ 1 s, median call ≤ 25 ms).

Loads every bundled history (tests/data/histories + the demo + tests/data/hubsim), starts the
emulator on a free port and times the calls the tracker makes, over real loopback HTTP.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from huggingface_hub import HfApi, hf_hub_url
from rich.console import Console
from rich.table import Table

from benchmarks.timing import p50_ms
from hubwatch.hubsim import HubSim, demo_root, load_root

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results" / "hubsim_speed.md"
TARGET_LOAD_S, TARGET_CALL_MS = 1.0, 25.0
REPEATS = 50


def _linked_root(into: Path) -> Path:
    for source in (ROOT / "tests" / "data" / "histories", demo_root(), ROOT / "tests" / "data" / "hubsim"):
        for folder in sorted(source.iterdir()):
            if folder.is_dir() and "__" in folder.name:
                (into / folder.name).symlink_to(folder.resolve(), target_is_directory=True)
    return into


def main() -> int:
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        root = _linked_root(Path(tmp))
        start = time.perf_counter()
        repos = load_root(root)
        load_s = time.perf_counter() - start
        revisions = sum(len(r.commits) for r in repos.values())
        with HubSim(root) as sim:
            api = HfApi(endpoint=sim.url, token=False)
            llama, tiny = "meta-llama/Llama-2-7b-hf", "hubsim-test/tiny-llama"
            shard = "model-00002-of-00002.safetensors"
            calls: dict[str, Callable[[], object]] = {
                "model_info(files_metadata=True)": lambda: api.model_info(llama, files_metadata=True),
                "list_repo_commits (12 commits)": lambda: api.list_repo_commits(llama),
                "list_models(sort=last_modified, limit=50)": lambda: list(
                    api.list_models(sort="last_modified", limit=50, expand=["sha", "lastModified"])
                ),
                "get_hf_file_metadata (HEAD)": lambda: api.get_hf_file_metadata(
                    url=hf_hub_url(llama, "config.json", endpoint=sim.url)
                ),
                "parse_safetensors_file_metadata (4.2 GB file)": lambda: api.parse_safetensors_file_metadata(
                    tiny, shard
                ),
            }
            timings = {name: p50_ms(call, REPEATS) for name, call in calls.items()}

    table = Table(title=f"hubsim speed ({len(repos)} repos, {revisions} revisions, median of {REPEATS})")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("target", justify="right")
    table.add_row("load all histories", f"{load_s * 1000:.0f} ms", f"≤ {TARGET_LOAD_S * 1000:.0f} ms")
    for name, ms in timings.items():
        table.add_row(name, f"{ms:.1f} ms", f"≤ {TARGET_CALL_MS:.0f} ms")
    console.print(table)

    ok = load_s <= TARGET_LOAD_S and all(ms <= TARGET_CALL_MS for ms in timings.values())
    lines = [
        "# hubsim speed",
        "",
        (
            f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC with `python -m benchmarks.hubsim_speed` "
            f"({len(repos)} repos, {revisions} revisions; median of {REPEATS} calls over loopback HTTP)."
        ),
        "",
        "| measure | value | target |",
        "|---|---:|---:|",
        f"| load all histories | {load_s * 1000:.0f} ms | ≤ {TARGET_LOAD_S * 1000:.0f} ms |",
        *(f"| {name} | {ms:.1f} ms | ≤ {TARGET_CALL_MS:.0f} ms |" for name, ms in timings.items()),
        "",
        f"Targets met: {'yes' if ok else 'no'}.",
        "",
    ]
    RESULTS.write_text("\n".join(lines))
    console.print(f"written to {RESULTS.relative_to(ROOT)}; targets met: {'yes' if ok else 'no'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
