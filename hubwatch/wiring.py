"""Builds the running pieces from settings: settings → clock → store → hub client → web app, scheduler.

The one place objects are constructed; nothing here runs at import time. The clock is chosen
here once (the system clock unless a caller passes another) and handed to every piece.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hubwatch.domain.clock import Clock, system_clock
from hubwatch.settings import Settings, load_settings

if TYPE_CHECKING:
    from fastapi import FastAPI

    from hubwatch.storage import Store
    from hubwatch.domain.records import RepoId
    from hubwatch.tracker.hub import HubClient
    from hubwatch.tracker.scheduler import PollCycle, Scheduler

__all__ = ["Runtime", "build_app", "build_cycle", "build_hub", "build_scheduler", "open_runtime", "open_store"]


@dataclass(frozen=True)
class Runtime:
    """What a command works with: the settings, an open store, a hub client and the clock."""

    settings: Settings
    store: Store
    hub: HubClient
    clock: Clock = system_clock


def open_store(settings: Settings, clock: Clock = system_clock) -> Store:
    from hubwatch.notify.policy import NotifyPolicy
    from hubwatch.storage import Store

    return Store.open(settings.database_url, clock, notify=NotifyPolicy())


def build_hub(settings: Settings) -> HubClient:
    from hubwatch.tracker.hub import HubClient

    return HubClient.from_settings(settings)


def build_app(
    settings: Settings,
    store: Store,
    on_webhook: Callable[[RepoId], None] | None = None,
    clock: Clock = system_clock,
) -> FastAPI:
    from hubwatch.feeds import create_app

    app: FastAPI = create_app(settings, store, on_webhook=on_webhook, clock=clock)
    return app


def build_cycle(runtime: Runtime, worker_id: str | None = None) -> PollCycle:
    from hubwatch.tracker.scheduler import PollCycle

    return PollCycle(
        hub=runtime.hub, store=runtime.store, settings=runtime.settings, worker_id=worker_id, clock=runtime.clock
    )


def build_scheduler(runtime: Runtime, cycle: PollCycle) -> Scheduler:
    from hubwatch.tracker.derivatives import DerivativesJob
    from hubwatch.tracker.scheduler import Scheduler

    # After each cycle: derivatives due refreshed (HUBWATCH_DERIVATIVES_REFRESH_S), inheritance checked.
    job = DerivativesJob(cycle, runtime.store, runtime.hub, runtime.settings, runtime.clock)
    # A quarter interval of jitter: several workers take turns reading the listing first.
    return Scheduler(job, runtime.settings.poll_interval_s, jitter_s=runtime.settings.poll_interval_s / 4)


@contextmanager
def open_runtime(settings: Settings | None = None, clock: Clock = system_clock) -> Iterator[Runtime]:
    """Settings (from the environment unless given), an open store and a hub client; closes both.

    `clock` (the system clock unless given) is the store's and the runtime's: pass `runtime.clock` on.
    """
    from hubwatch.tracker.rederive import rederive_if_needed

    settings = settings if settings is not None else load_settings()
    store = open_store(settings, clock)
    hub: HubClient | None = None
    try:
        rederive_if_needed(store, settings, clock)  # records of an older advisory model: once, then a no-op
        hub = build_hub(settings)
        yield Runtime(settings, store, hub, clock)
    finally:
        if hub is not None:
            hub.close()
        store.close()
