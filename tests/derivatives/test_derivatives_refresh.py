"""New derivatives are picked up: the listing is read again once HUBWATCH_DERIVATIVES_REFRESH_S has
passed (not before), as `hubwatch run`'s scheduled job does after its poll cycle."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hubwatch.domain.records import RepoId
from hubwatch.settings import Settings
from hubwatch.tracker.derivatives import DerivativesJob, derivatives, refresh_derivatives, watch_with_derivatives
from hubwatch.tracker.hub import HubClient

BASE = RepoId.parse("famlab/base")
LATE = RepoId.parse("famlab/late-tune")


def test_a_derivative_published_later_is_watched_at_the_next_refresh(
    hubsim_factory: Any, store: Any, data_dir: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    shutil.copytree(data_dir / "derivatives", root)
    # Only a v2 folder: hidden while the emulator shows v1, published by advance().
    shutil.copytree(root / "famlab__chat-stale" / "v1", root / "famlab__late-tune" / "v2")
    sim = hubsim_factory(root=root, at="v1")
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, derivatives_refresh_s=3600)
    hub = HubClient.from_settings(settings)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    now = [start]

    def clock() -> datetime:
        return now[0]

    assert LATE not in dict(watch_with_derivatives(store, hub, BASE, clock=clock))
    sim.advance(str(LATE))
    now[0] = start + timedelta(minutes=30)
    assert refresh_derivatives(store, hub, settings, clock) == {}  # read 30 minutes ago: not due
    now[0] = start + timedelta(hours=2)
    polled: list[str] = []
    job = DerivativesJob(lambda: polled.append("cycle") or "outcome", store, hub, settings, clock)
    assert job() == "outcome" and polled == ["cycle"]
    assert {m.repo: m.relation for m in derivatives(store).members()}[LATE] == "finetune"
    assert LATE in {s.repo for s in store.repos.watched()}
    assert derivatives(store).roots()[0].refreshed_at == now[0]
    # A derivative unwatched by hand stays unwatched at the next refresh; an unwatched base is not followed.
    store.unwatch(LATE)
    now[0] = start + timedelta(hours=4)
    refresh_derivatives(store, hub, settings, clock)
    assert LATE not in {s.repo for s in store.repos.watched()}
    store.unwatch(BASE)
    now[0] = start + timedelta(hours=6)
    refresh_derivatives(store, hub, settings, clock)
    assert derivatives(store).roots()[0].refreshed_at == start + timedelta(hours=4)
