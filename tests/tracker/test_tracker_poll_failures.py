"""Bad input during a poll: each failing repo gets a clear, recorded reason; the others carry on.

Faults are injected by the emulator (missing and gated repos, invalid JSON, truncated bodies,
429s); nothing stored before a failure is lost, and a later poll resumes where it stopped.
"""

from __future__ import annotations

import csv
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from hubwatch.settings import Settings
from hubwatch.domain.records import RepoId
from hubwatch.tracker.hub import HubClient
from hubwatch.hubsim import demo_root
from hubwatch.hubsim.modes import requests_seen
from hubwatch.tracker.poller import Failed, NewRevisions, Unchanged, backoff_delay, next_poll_at, poll_repos

LLAMA = RepoId.parse("meta-llama/Llama-2-7b-hf")
QWEN = RepoId.parse("Qwen/Qwen-7B")
GATED = RepoId.parse("hubsim-test/gated-model")
MISSING = RepoId.parse("nobody/not-there")


@pytest.fixture
def root(tmp_path: Path, data_dir: Path) -> Path:
    """Llama-2 (demo), Qwen-7B and a gated repo side by side."""
    folder = tmp_path / "root"
    folder.mkdir()
    for source in (
        demo_root() / "meta-llama__Llama-2-7b-hf",
        data_dir / "histories" / "Qwen__Qwen-7B",
        data_dir / "hubsim" / "hubsim-test__gated-model",
    ):
        (folder / source.name).symlink_to(source.resolve(), target_is_directory=True)
    return folder


def shas(root: Path, repo: RepoId) -> list[str]:
    text = (root / f"{repo.org}__{repo.name}" / "HISTORY.tsv").read_text(encoding="utf-8")
    return [r["commit"] for r in csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)]


def start(hubsim_factory: Any, root: Path, store: Any, *repos: RepoId) -> tuple[Any, HubClient, Settings]:
    sim = hubsim_factory(root=root, at="v1")
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, poll_interval_s=60)
    for repo in repos:
        store.watch(repo)
    return sim, HubClient.from_settings(settings), settings


def test_missing_and_gated_repos_are_recorded_states(hubsim_factory: Any, root: Path, store: Any) -> None:
    sim, hub, settings = start(hubsim_factory, root, store, LLAMA, MISSING, GATED, QWEN)
    outcomes = poll_repos([LLAMA, MISSING, GATED, QWEN], hub=hub, store=store, settings=settings)
    llama, missing, gated, qwen = outcomes
    assert isinstance(llama, NewRevisions) and isinstance(qwen, NewRevisions)
    assert isinstance(missing, Failed) and missing.state == "not_found"
    assert str(MISSING) in missing.reason and "spelling" in missing.fix
    assert isinstance(gated, Failed) and gated.state == "gated"
    assert str(GATED) in gated.reason and "HF_TOKEN" in gated.fix
    states = {s.repo: s for s in store.repos.watched()}
    assert states[MISSING].state == "not_found" and str(MISSING) in (states[MISSING].last_error or "")
    assert states[GATED].state == "gated"
    assert states[LLAMA].state == "ok" and states[LLAMA].last_error is None
    assert store.history(GATED) == [] and store.history(MISSING) == []


def test_invalid_json_stops_that_repo_only_and_keeps_what_succeeded(
    hubsim_factory: Any, root: Path, store: Any
) -> None:
    sim, hub, settings = start(hubsim_factory, root, store, LLAMA, QWEN)
    poll_repos([LLAMA], hub=hub, store=store, settings=settings)
    llama = shas(demo_root(), LLAMA)
    for _ in range(4):  # v2..v5; v5 is the first to change generation_config.json
        sim.advance(str(LLAMA))
    sim.advance(str(QWEN))
    sim.set_faults(invalid_json="meta-llama/Llama-2-7b-hf/generation_config.json")
    failed, qwen = poll_repos([LLAMA, QWEN], hub=hub, store=store, settings=settings)
    assert isinstance(failed, Failed) and failed.state == "error"
    assert str(LLAMA) in failed.reason and "generation_config.json" in failed.reason
    assert llama[4][:12] in failed.reason  # names the revision that could not be read
    assert failed.saved == tuple(llama[1:4])
    assert isinstance(qwen, NewRevisions) and len(qwen.shas) == 2
    assert [e.revision.sha for e in store.history(LLAMA)] == llama[:4]
    # Upstream fixes the file: the next poll resumes at v5, in order, on the right parent.
    sim.set_faults()
    (resumed,) = poll_repos([LLAMA], hub=hub, store=store, settings=settings)
    assert isinstance(resumed, NewRevisions) and resumed.shas == (llama[4],)
    assert store.history(LLAMA)[4].revision.parent == llama[3]
    assert [c.summary for c in store.history(LLAMA)[4].changes] == ["pad_token_id 32000 → 0"]


def test_truncated_response_is_a_clear_failure(hubsim_factory: Any, root: Path, store: Any) -> None:
    sim, hub, settings = start(hubsim_factory, root, store, LLAMA, QWEN)
    poll_repos([LLAMA, QWEN], hub=hub, store=store, settings=settings)
    before = [e.revision.sha for e in store.history(QWEN)]
    sim.advance(str(QWEN))
    sim.advance(str(LLAMA))
    sim.set_faults(truncate="Qwen/Qwen-7B/generation_config.json")
    llama, qwen = poll_repos([LLAMA, QWEN], hub=hub, store=store, settings=settings)
    assert isinstance(llama, NewRevisions)
    assert isinstance(qwen, Failed) and str(QWEN) in qwen.reason and "generation_config.json" in qwen.reason
    assert "truncated" in qwen.reason or "malformed" in qwen.reason
    assert [e.revision.sha for e in store.history(QWEN)] == before


def test_rate_limit_backs_off_at_least_retry_after(hubsim_factory: Any, root: Path, store: Any) -> None:
    sim, hub, settings = start(hubsim_factory, root, store, LLAMA, QWEN)
    sim.set_faults(rate_limit=1, retry_after=900)
    limited, qwen = poll_repos([LLAMA, QWEN], hub=hub, store=store, settings=settings)
    assert isinstance(limited, Failed) and limited.retry_after == 900 and str(LLAMA) in limited.reason
    # The 429 said `RateLimit: r=0;t=900`: the window is empty for every repo, so QWEN is deferred
    # without a request rather than sent into another 429.
    assert isinstance(qwen, Failed) and "deferred" in qwen.reason and (qwen.retry_after or 0) > 890
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert (next_poll_at(limited, 1, settings, now) - now).total_seconds() == 900
    # Deferrals are not the repos' failures: nothing recorded on them.
    assert [(s.state, s.failures) for s in store.repos.watched()] == [("new", 0), ("new", 0)]
    # A restarted worker honours the window recorded in the store, sending nothing inside it ...
    sent = requests_seen(sim.state)
    (inside,) = poll_repos([LLAMA], hub=HubClient.from_settings(settings), store=store, settings=settings)
    assert isinstance(inside, Failed) and inside.deferred and requests_seen(sim.state) == sent
    # ... and polls again once it has passed.
    after = datetime.now(timezone.utc) + timedelta(seconds=901)
    hub = HubClient.from_settings(settings)
    (later,) = poll_repos([LLAMA], hub=hub, store=store, settings=settings, clock=lambda: after)
    assert isinstance(later, NewRevisions)


def test_backoff_grows_exponentially_and_resets() -> None:
    settings = Settings(database_url="sqlite://", poll_interval_s=60)
    assert [backoff_delay(n, settings) for n in range(5)] == [60, 60, 120, 240, 480]
    assert backoff_delay(40, settings) == 24 * 3600
    assert backoff_delay(1, settings, retry_after=300) == 300
    ok = Unchanged(LLAMA, "0" * 40)
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert (next_poll_at(ok, 0, settings, now) - now).total_seconds() == 60
