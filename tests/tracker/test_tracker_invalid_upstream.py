"""An upstream commit whose config.json is not valid JSON is a finding, not a wall: the repo's
later commits are still tracked (a cut-short download is still a failure, retried next poll)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracker_polling import copy_history, poll_once

from hubwatch.domain.records import Kind, RepoId, Severity
from hubwatch.tracker.poller import Failed, NewRevisions

QWEN = RepoId.parse("Qwen/Qwen-7B")


def test_broken_json_upstream_is_recorded_and_tracking_goes_on(
    hubsim_factory: Any, store: Any, data_dir: Path, tmp_path: Path
) -> None:
    folder = copy_history(data_dir, tmp_path)
    (folder / "v2" / "config.json").write_text('{"model_type": "qwen", oops', encoding="utf-8")
    outcome = poll_once(hubsim_factory(root=tmp_path, at=None), store, QWEN)
    assert isinstance(outcome, NewRevisions) and len(outcome.shas) == 3, outcome
    v1, v2, v3 = store.history(QWEN)
    broken = [c for c in v2.changes if c.path == "config.json"]
    assert broken and broken[0].severity is Severity.HIGH and "not valid JSON" in broken[0].summary
    repaired = [c for c in v3.changes if c.path == "config.json" and "valid JSON" in c.summary]
    assert repaired and repaired[0].direction == "update"
    assert {Kind.CONTEXT} <= {c.kind for c in v3.changes}  # v3's own change is still seen


def test_a_cut_short_download_still_fails_and_names_the_file(hubsim_factory: Any, store: Any, data_dir: Path) -> None:
    sim = hubsim_factory(root=data_dir / "histories", at=None)
    sim.set_faults(truncate="Qwen/Qwen-7B/config.json", truncate_fraction=0.5)
    outcome = poll_once(sim, store, QWEN)
    assert isinstance(outcome, Failed) and "config.json: truncated response" in outcome.reason
    assert "next poll" in outcome.fix
