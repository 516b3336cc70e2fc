"""`hubwatch poll` on a dataset head stored before the hub converted it says so, and when it is asked
again; a later poll, once the converter ran, keeps the conversion (the emulator's conversion lag,
the official huggingface_hub client, SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from hubwatch.cli import _register, cli
from hubwatch.diff.dataset_parquet import CONVERSION_PATH
from hubwatch.domain.clock import fixed_clock
from hubwatch.storage import Store
from tests.tracker.csv_upload import UPLOAD, csv_upload


def _run(env: dict[str, str], at: Any, *args: str) -> Result:
    _register()
    return CliRunner().invoke(cli, list(args), env=env, obj={"clock": fixed_clock(at)})


def test_poll_says_a_dataset_head_waits_for_its_conversion(
    tmp_path: Path, hubsim_factory: Any, database_url: str
) -> None:
    csv_upload(tmp_path)
    sim = hubsim_factory(root=tmp_path, at="v1", conversion_lag=True)
    first = sim.state.history(str(UPLOAD)).commits[0].date
    env = {"HUBWATCH_HUB_ENDPOINT": sim.url, "HUBWATCH_DATABASE_URL": database_url, "COLUMNS": "250"}
    assert _run(env, first, "watch", "add", str(UPLOAD)).exit_code == 0
    polled = _run(env, first + timedelta(minutes=2), "poll")
    assert polled.exit_code == 0, polled.output
    line = next(line for line in polled.output.splitlines() if str(UPLOAD) in line and "new" in line)
    assert "its parquet conversion is not out yet; asked again from 2024-01-01 00:07 UTC" in line, line

    sim.convert(str(UPLOAD))
    again = _run(env, first + timedelta(minutes=8), "poll")
    assert again.exit_code == 0, again.output
    assert "unchanged" in again.output and "not out yet" not in again.output
    store = Store.open(database_url)
    try:
        head = store.head(UPLOAD)
        assert head is not None and store.revisions.stored_file(UPLOAD, head.sha, CONVERSION_PATH) is not None
    finally:
        store.close()
