"""`hubwatch run` (scheduler + web), `serve` (web only) and `demo` (a replayed history, offline)."""

from __future__ import annotations

import threading

import click
from rich.console import Console

from hubwatch.cli import cli
from hubwatch.settings import load_settings
from hubwatch.wiring import Runtime, build_app, build_scheduler, open_runtime

__all__ = ["demo", "run", "serve"]

DEMO_REPO = "meta-llama/Llama-2-7b-hf"


def _serve(runtime: Runtime, host: str, port: int) -> None:
    import uvicorn

    app = build_app(runtime.settings, runtime.store)
    uvicorn.run(app, host=host, port=port, log_level="warning")


@cli.command()
@click.option("--no-web", is_flag=True, help="Only poll (a worker); no web app in this process.")
@click.option("--worker-id", default=None, help="Name of this worker in the lease table (default host:pid).")
def run(no_web: bool, worker_id: str | None) -> None:
    """Poll watched repos every HUBWATCH_POLL_INTERVAL_S seconds and serve the web app."""
    out = Console(stderr=True)
    with open_runtime() as rt:
        scheduler = build_scheduler(rt, worker_id)
        scheduler.start()
        out.print(f"polling every {rt.settings.poll_interval_s}s against {rt.settings.hub_endpoint}")
        try:
            if no_web:
                threading.Event().wait()
            else:
                out.print(f"web app on http://{rt.settings.host}:{rt.settings.port}/")
                _serve(rt, rt.settings.host, rt.settings.port)
        except KeyboardInterrupt:
            pass
        finally:
            scheduler.stop(wait=False)


@cli.command()
def serve() -> None:
    """Serve the web app only (pages, feeds, OSV API) from the store."""
    with open_runtime() as rt:
        Console(stderr=True).print(f"web app on http://{rt.settings.host}:{rt.settings.port}/")
        _serve(rt, rt.settings.host, rt.settings.port)


@cli.command()
@click.option("--port", type=int, default=None, help="Port of the web app (default HUBWATCH_PORT).")
@click.option("--every", type=float, default=5.0, show_default=True, help="Seconds between emulated upstream commits.")
def demo(port: int | None, every: float) -> None:
    """Replay Llama-2-7b-hf's real history through the built-in hub emulator; no network needed.

    Starts the emulator at the first revision, watches the repo, backfills, then lets a new
    upstream commit appear every few seconds; the web app shows each one as it is polled.
    """
    from hubwatch.tracker.hubsim import HubSim, demo_root
    from hubwatch.tracker.poller import poll_repos
    from hubwatch.storage.records import RepoId

    out = Console(stderr=True)
    base = load_settings()
    repo = RepoId.parse(DEMO_REPO)
    sim = HubSim(demo_root(), at=1)
    sim.start()
    try:
        settings = base.model_copy(update={"hub_endpoint": sim.url, "port": port or base.port, "hf_token": None})
        with open_runtime(settings) as rt:
            rt.store.watch(repo)
            outcomes = poll_repos([repo], hub=rt.hub, store=rt.store, settings=settings)
            out.print(f"emulated hub at {sim.url}; backfilled {repo}: {outcomes[0]}")
            stop = threading.Event()

            def replay() -> None:
                while not stop.wait(every):
                    if not sim.advance(str(repo)):
                        out.print("[dim]demo history fully replayed[/dim]")
                        return
                    for outcome in poll_repos([repo], hub=rt.hub, store=rt.store, settings=settings):
                        out.print(f"upstream commit appeared → {outcome}")

            worker = threading.Thread(target=replay, name="hubwatch-demo", daemon=True)
            worker.start()
            web = f"http://{settings.host}:{settings.port}"
            out.print(f"\nopen:\n  model page  {web}/models/{repo}\n  feed        {web}/feeds/{repo}.atom\n"
                      f"  all changes {web}/feeds/all.atom\n  OSV API     POST {web}/v1/query "
                      f"{{\"package\": {{\"ecosystem\": \"GIT\", \"name\": \"{repo.url()}\"}}}}\n")
            try:
                _serve(rt, settings.host, settings.port)
            finally:
                stop.set()
                worker.join(timeout=every + 30)
    finally:
        sim.stop()
