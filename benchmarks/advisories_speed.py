"""Speed of plan_advisories per revision, of the OSV check per record and of the pin scanner.

Targets: ≤5 ms per revision, ≥300 files/s. The OSV check every advisory write makes
(`validate_osv`: the schema compiled by jsonschema-rs, jsonschema only for a record it refuses) is
timed beside jsonschema on the same records, the check each write made before.
Run: `python -m benchmarks.advisories_speed`. Pure CPU; no store, no network.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table

from hubwatch.settings import Settings
from hubwatch.domain.records import AdvisoryRecord, ChangeRecord, Direction, Kind, RepoId, RevisionRecord, Severity
from hubwatch.advisories.advise import plan_advisories
from hubwatch.advisories.osv import schema, validate_osv
from hubwatch.pincheck.pins import scan_path

TARGET_MS_PER_REVISION = 5.0
TARGET_SCAN_FILES_S = 300.0
REPO = RepoId("bench", "model")


def _changes(n: int) -> list[ChangeRecord]:
    kinds = list(Kind)
    out = []
    for i in range(6):
        kind = kinds[(n + i) % len(kinds)]
        key = f"key_{(n + i) % 9}"
        out.append(ChangeRecord(kind, list(Severity)[(n + i) % 5], f"config.json:{key}", f"{key} changed",
                                {"file": "config.json", "key": key, "old": n % 3, "new": (n + 1) % 3},
                                Direction.HAZARD if (n + i) % 3 else Direction.UPDATE))
    return out


def bench_plan(revisions: int = 400, built: list[AdvisoryRecord] | None = None) -> list[float]:
    """Milliseconds per revision over a growing history (prior advisories passed in, as the tracker
    does); each record planned is appended to `built`."""
    stored: dict[str, AdvisoryRecord] = {}
    settings = Settings()
    timings = []
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    for n in range(2, revisions + 2):
        revision = RevisionRecord(f"{n:040x}", f"{n - 1:040x}", t0 + timedelta(hours=n), "bench")
        changes = _changes(n)
        start = time.perf_counter()
        out = plan_advisories(REPO, revision, changes, list(stored.values()), settings)
        timings.append((time.perf_counter() - start) * 1000)
        if built is not None:
            built.extend(out)
        stored.update({r.id: r for r in out})
    return timings


def bench_validate(records: list[AdvisoryRecord], rounds: int = 5) -> tuple[float, float]:
    """Milliseconds per record (best of `rounds` passes): `validate_osv`, and jsonschema's
    Draft 2020-12 validator on the same packaged schema (what each write ran before)."""
    from jsonschema import Draft202012Validator

    reference = Draft202012Validator(schema())
    validate_osv(records[0].osv)  # compiled once, before the clock
    best = {"compiled": float("inf"), "jsonschema": float("inf")}
    for _ in range(rounds):
        for name, check in (("compiled", validate_osv), ("jsonschema", reference.validate)):
            start = time.perf_counter()
            for record in records:
                check(record.osv)
            best[name] = min(best[name], (time.perf_counter() - start) * 1000 / len(records))
    return best["compiled"], best["jsonschema"]


def bench_scan(copies: int = 200) -> tuple[float, float, int, int]:
    """(files/s, MB/s, files, pins) scanning `copies` of the check fixture code base (reads included)."""
    source = Path(__file__).resolve().parent.parent / "tests" / "data" / "checkproj"
    files = [p for p in source.rglob("*") if p.is_file() and ".venv" not in p.parts]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        size = 0
        for i in range(copies):
            for f in files:
                target = root / f"copy{i}" / f.relative_to(source)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(f.read_bytes())
                size += f.stat().st_size
        start = time.perf_counter()
        report = scan_path(root)
        elapsed = time.perf_counter() - start
    return report.files_scanned / elapsed, size / 1e6 / elapsed, report.files_scanned, len(report.pins)


def main() -> int:
    built: list[AdvisoryRecord] = []
    timings = bench_plan(built=built)
    compiled_ms, jsonschema_ms = bench_validate(built)
    files_s, mb_s, files, pins = bench_scan()
    median, p95 = statistics.median(timings), sorted(timings)[int(len(timings) * 0.95)]
    table = Table(title="advisories and check: speed")
    for column in ("measure", "value", "target"):
        table.add_column(column)
    table.add_row("plan_advisories, median ms/revision (400 revisions, 6 changes each)", f"{median:.2f}",
                  f"≤ {TARGET_MS_PER_REVISION}")
    table.add_row("plan_advisories, p95 ms/revision", f"{p95:.2f}", "")
    table.add_row(f"OSV check per record on the write path, validate_osv ({len(built)} records planned above)",
                  f"{compiled_ms:.4f} ms", "")
    table.add_row("the same records by jsonschema (the check before)",
                  f"{jsonschema_ms:.3f} ms ({jsonschema_ms / compiled_ms:.0f}×)", "")
    table.add_row(f"pin scan ({files} small files, {pins} pins; reads included)",
                  f"{files_s:.0f} files/s ({mb_s:.2f} MB/s)", f"≥ {TARGET_SCAN_FILES_S:.0f} files/s")
    Console().print(table)
    ok = median <= TARGET_MS_PER_REVISION and files_s >= TARGET_SCAN_FILES_S
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
