"""`hubwatch run` (scheduler + web), `serve` (web only) and `demo` (a replayed history, offline)."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import click

from hubwatch.cli import cli, command_clock
from hubwatch.cli.console import err_console, escape
from hubwatch.domain.records import RepoId

if TYPE_CHECKING:
    from fastapi import FastAPI
    from rich.console import Console

    from hubwatch.tracker.poller import PollOutcome
    from hubwatch.tracker.scheduler import PollCycle, Scheduler
    from hubwatch.wiring import Runtime

__all__ = ["demo", "run", "serve", "web_app"]

DEMO_REPO = "meta-llama/Llama-2-7b-hf"


def _check_port(host: str, port: int) -> None:
    """Fail with a one-line message (exit 2) when the web app could not listen on host:port."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise click.UsageError(
            f"cannot listen on {host}:{port}: {reason} — set HUBWATCH_PORT (or --port) to a free port, "
            "or HUBWATCH_HOST to an address of this machine"
        ) from exc


# How long a thread may hold the interpreter while another waits for it (Python's default: 5 ms).
# The event loop gives the interpreter up at every wait on its sockets and needs it back to go on;
# behind a thread rendering a deep page it waits the whole interval each time, and an answer takes
# several such turns. A web process gives the loop its turn sooner: /healthz and every response's
# bytes move while pages render.
WEB_SWITCH_INTERVAL_S = 0.0005


def _serve(runtime: Runtime, host: str, port: int, on_webhook: Callable[[RepoId], None] | None = None) -> None:
    import sys

    import uvicorn

    sys.setswitchinterval(WEB_SWITCH_INTERVAL_S)

    from hubwatch.wiring import build_app

    app = build_app(runtime.settings, runtime.store, on_webhook, runtime.clock)
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning")
    except SystemExit as exc:  # uvicorn exits 3 when it cannot start: not hubwatch's "hub" code
        if exc.code not in (0, None):
            raise click.ClickException(f"the web app on {host}:{port} could not start (see the error above)") from exc
        raise


@cli.command()
@click.option("--no-web", is_flag=True, help="Only poll (a worker); no web app in this process.")
@click.option("--worker-id", default=None, help="Name of this worker in the lease table (default host:pid).")
def run(no_web: bool, worker_id: str | None) -> None:
    """Poll watched repos every HUBWATCH_POLL_INTERVAL_S seconds and serve the web app.

    Several `run` processes on one PostgreSQL database share the repos (leases); a hub webhook
    (POST /webhooks/hub, HUBWATCH_WEBHOOK_SECRET) triggers an immediate poll of its repo.
    """
    from hubwatch.settings import load_settings
    from hubwatch.tracker.derivatives import poll_now_with_derivatives
    from hubwatch.wiring import build_cycle, build_scheduler, open_runtime

    out = err_console()
    if not no_web:
        settings = load_settings()
        _check_port(settings.host, settings.port)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("apscheduler", "alembic", "httpx", "httpx2"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    with open_runtime(clock=command_clock()) as rt:
        cycle = build_cycle(rt, worker_id)
        if worker_id:  # a restart under a stable id: the leases its crashed run left are its own
            left = rt.store.leases.drop_leases(worker_id)
            if left:
                out.print(escape(f"worker {worker_id}: took back {left} leases of its previous run"))
        scheduler = build_scheduler(rt, cycle)
        scheduler.start()
        from hubwatch.notify.sender import Sender

        notifier, stop_notifier = Sender(rt.store, rt.settings, clock=rt.clock).start()  # the outbox, after commit
        out.print(escape(f"worker {cycle.worker_id}: polling every {rt.settings.poll_interval_s}s "
                         f"against {rt.settings.hub_endpoint}"))

        def on_webhook(repo: RepoId) -> None:  # its poll now, then the derivatives pass for it (docs/derivatives.md)
            scheduler.submit(lambda: poll_now_with_derivatives(cycle.poll_now, rt.store, rt.settings, repo, rt.clock))

        try:
            if no_web:
                stop = threading.Event()
                signal.signal(signal.SIGTERM, lambda *_: stop.set())  # `docker stop`, systemd
                stop.wait()
            else:
                out.print(escape(f"web app on http://{rt.settings.host}:{rt.settings.port}/"))
                _serve(rt, rt.settings.host, rt.settings.port, on_webhook)
        except KeyboardInterrupt:
            pass
        finally:
            stop_notifier.set()
            notifier.join(2 * rt.settings.notify_timeout_s + 5)  # the delivery in flight ends and is recorded
            _shut_down(out, rt, cycle, scheduler)


def _shut_down(out: Console, rt: Runtime, cycle: PollCycle, scheduler: Scheduler) -> None:
    """Stop claiming, let the repo being polled reach its next revision boundary within
    HUBWATCH_SHUTDOWN_GRACE_S, release what is still leased: nothing is recorded as a failure."""
    import os
    import sys

    cycle.stop()
    grace = rt.settings.shutdown_grace_s
    idle = cycle.wait_idle(grace)
    scheduler.stop(wait=idle)
    cycle.close()
    if idle:
        out.print(escape(f"worker {cycle.worker_id}: stopped"))
        return
    # Still inside one hub call past the grace: every revision is its own transaction, so leaving
    # now loses nothing stored; the leases go back so another worker (or this one, restarted) resumes.
    rt.store.leases.drop_leases(cycle.worker_id)
    out.print(escape(f"worker {cycle.worker_id}: stopped after {grace:g}s with a poll in flight; its repos are free"))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@cli.command()
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    envvar="HUBWATCH_WEB_WORKERS",
    help="Web app processes (uvicorn workers) sharing the port [env HUBWATCH_WEB_WORKERS]. One process "
    "runs Python on one core at a time; on N cores, N workers serve N requests at once. Each opens its "
    "own store (settings from the environment) with HUBWATCH_WEB_THREADS threads.",
)
def serve(workers: int) -> None:
    """Serve the web app only (pages, feeds, OSV API) from the store."""
    from hubwatch.wiring import open_runtime

    with open_runtime(clock=command_clock()) as rt:
        _check_port(rt.settings.host, rt.settings.port)
        plural = "" if workers == 1 else f" ({workers} workers)"
        err_console().print(escape(f"web app on http://{rt.settings.host}:{rt.settings.port}/{plural}"))
        if workers == 1:
            _serve(rt, rt.settings.host, rt.settings.port)
        else:
            _serve_workers(rt.settings.host, rt.settings.port, workers)


def web_app() -> FastAPI:
    """The web app over the store the environment names (HUBWATCH_DATABASE_URL …): the factory each
    uvicorn worker of `serve --workers N` calls in its own process (the system clock)."""
    import sys

    from hubwatch.settings import load_settings
    from hubwatch.wiring import build_app, open_store

    sys.setswitchinterval(WEB_SWITCH_INTERVAL_S)
    settings = load_settings()
    return build_app(settings, open_store(settings))


def _serve_workers(host: str, port: int, workers: int) -> None:
    import socket

    import uvicorn
    from uvicorn.supervisors import Multiprocess

    config = uvicorn.Config(
        "hubwatch.cli.run:web_app", factory=True, workers=workers, host=host, port=port, log_level="warning"
    )
    try:
        sock = config.bind_socket()
        # uvicorn binds the shared socket without a protocol number, so asyncio leaves Nagle on for
        # the connections it accepts: each answer then waits ~40 ms for the client's delayed ACK.
        # Connections accepted from a listening socket with TCP_NODELAY inherit it.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        Multiprocess(config, sockets=[sock]).run()
    except SystemExit as exc:  # uvicorn exits 3 when it cannot start: not hubwatch's "hub" code
        if exc.code not in (0, None):
            raise click.ClickException(f"the web app on {host}:{port} could not start (see the error above)") from exc
        raise


def _report(out: Console, rt: Runtime, outcomes: Sequence[PollOutcome]) -> None:
    """One line per new revision with its most severe changes (what the web app now shows)."""
    from hubwatch.tracker.poller import Failed, NewRevisions

    for outcome in outcomes:
        if isinstance(outcome, Failed):
            out.print(f"[red]poll failed[/red] {escape(outcome.reason)}")
        if not isinstance(outcome, NewRevisions):
            continue
        for sha in outcome.shas:
            entry = rt.store.revision(outcome.repo, sha)
            if entry is None:
                continue
            if entry.revision.parent is None:
                out.print(escape(f"first commit {sha[:12]} “{entry.revision.title}” stored as the starting state"))
                continue
            ranked = sorted(entry.changes, key=lambda c: -c.severity.rank)
            what = f"{ranked[0].kind.value}/{ranked[0].severity.value} {ranked[0].summary[:80]}" if ranked else "no change"
            more = f" (+{len(ranked) - 1} more)" if len(ranked) > 1 else ""
            out.print(escape(f"new commit {sha[:12]} “{entry.revision.title}”: {what}{more}"), highlight=False,
                      soft_wrap=True)


@cli.command()
@click.option("--port", type=int, default=None, help="Port of the web app (default HUBWATCH_PORT).")
@click.option("--every", type=float, default=5.0, show_default=True, help="Seconds between emulated upstream commits.")
def demo(port: int | None, every: float) -> None:
    """Replay Llama-2-7b-hf's real history through the built-in hub emulator; no network needed.

    Starts the emulator at the first revision, watches the repo, backfills, then lets a new
    upstream commit appear every few seconds; the web app shows each one as it is polled.
    """
    from hubwatch.hubsim import HubSim, demo_root
    from hubwatch.hubsim import SimError
    from hubwatch.settings import load_settings
    from hubwatch.tracker.poller import poll_repos
    from hubwatch.wiring import open_runtime, open_store

    out = err_console()
    base = load_settings()
    _check_port(base.host, port or base.port)
    repo = RepoId.parse(DEMO_REPO)
    store = open_store(base, command_clock())
    try:  # a second demo in the same folder carries on where the first one stopped
        at = max(1, store.revisions.revision_count(repo))
    finally:
        store.close()
    sim = HubSim(demo_root(), at=at).start()
    try:
        web_port = port or base.port
        settings = base.model_copy(update={
            "hub_endpoint": sim.url, "port": web_port, "hf_token": None,
            "public_url": f"http://{base.host}:{web_port}",
        })
        with open_runtime(settings, command_clock()) as rt:
            rt.store.watch(repo)
            out.print(escape(f"emulated hub at {sim.url} (upstream history of {repo}, from commit {at} of it)"))
            _report(out, rt, poll_repos([repo], hub=rt.hub, store=rt.store, settings=settings, clock=rt.clock))
            stop = threading.Event()

            total = len(sim.state.repos[str(repo)].commits)

            def replay() -> None:
                while sim.state.visible_count(str(repo)) < total and not stop.wait(every):
                    try:
                        sim.advance(str(repo))
                    except SimError:
                        break
                    _report(out, rt, poll_repos([repo], hub=rt.hub, store=rt.store, settings=settings, clock=rt.clock))
                if sim.state.visible_count(str(repo)) >= total:
                    out.print(f"[dim]demo history fully replayed ({total} commits); the web app stays up[/dim]")

            worker = threading.Thread(target=replay, name="hubwatch-demo", daemon=True)
            worker.start()
            web = f"http://{settings.host}:{settings.port}"
            out.print(escape(
                f"\nopen:\n  model page   {web}/models/{repo}\n  model feed   {web}/models/{repo}/feed.atom\n"
                f"  org page     {web}/orgs/{repo.org}\n"
                f"  all changes  {web}/feed.atom\n  history API  {web}/api/v1/models/{repo}/history\n"
                f"  OSV API      curl -s {web}/v1/query -d '{{\"package\": {{\"ecosystem\": \"GIT\", "
                f"\"name\": \"{repo.url()}\"}}}}'\n"),
                highlight=False, soft_wrap=True,
            )
            try:
                _serve(rt, settings.host, settings.port)
            finally:
                stop.set()
                worker.join(timeout=every + 30)
    finally:
        sim.stop()
