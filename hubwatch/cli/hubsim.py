"""`hubwatch hubsim`: run the hub emulator over a folder of repo histories."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from hubwatch.cli import cli

__all__ = ["hubsim"]


@cli.command()
@click.option(
    "--root",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Folder of repo histories (<org>__<name>/v1/…, optional HISTORY.tsv, GATED, vN/weights.json). "
    "Default: the bundled demo (meta-llama/Llama-2-7b-hf).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=0, show_default=True, type=click.IntRange(0, 65535), help="Port (0: a free one).")
@click.option("--at", "at", default=None, help="Start every repo at version vK (default: all versions visible).")
@click.option("--page-size", type=click.IntRange(min=1), default=None, help="Page size of every paged listing.")
@click.option(
    "--error-rate", type=click.FloatRange(0, 1), default=0.0, help="Share of requests answered --error-status."
)
@click.option(
    "--error-status", type=click.IntRange(400, 599), default=503, show_default=True, help="Status of injected errors."
)
@click.option("--latency-ms", type=click.IntRange(min=0), default=0, help="Delay added to every request.")
@click.option("--rate-limit", type=click.IntRange(min=0), default=0, help="Answer the next N requests with 429.")
@click.option(
    "--retry-after", type=click.IntRange(min=0), default=1, show_default=True, help="Retry-After of those 429s."
)
@click.option("--truncate", default=None, metavar="GLOB", help="Cut full GETs of matching files short.")
@click.option("--truncate-fraction", type=click.FloatRange(0, 1, max_open=True), default=0.5, show_default=True,
              help="Share of the bytes a truncated GET sends.")  # fmt: skip
@click.option("--invalid-json", default=None, metavar="GLOB", help="Serve matching files as a body that is not JSON.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the --error-rate draws.")
@click.option("--fault", "more_faults", multiple=True, metavar="NAME=VALUE",
              help="Any other fault setting (repeatable), e.g. invalid_token='*', disabled='org/*', deleted=GLOB, "
                   "gated='meta-llama/*' gated_token=hf_x, ratelimit_quota=500 ratelimit_window_s=300, "
                   "trickle=GLOB trickle_ms=1000, reset_rate=0.1, chaos_rate=0.3, broken_header=GLOB broken_header_kind=nested, "
                   "rate_limit_path=GLOB (values read as JSON, else as text).")  # fmt: skip
@click.option("--conversion-lag", is_flag=True, default=False,
              help="No dataset version (from the start, or revealed by advance) gets its parquet conversion until "
                   "POST /_sim/datasets/{org}/{name}/convert runs the converter (as the hub converts minutes later).")  # fmt: skip
@click.option("--webhook", default=None, metavar="URL", help="POST a hub-style webhook here after each advance.")
@click.option("--webhook-secret", default=None, help="Sent as X-Webhook-Secret with each webhook.")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]), help="uvicorn log level (stderr).")  # fmt: skip
def hubsim(
    root: Path | None,
    host: str,
    port: int,
    at: str | None,
    page_size: int | None,
    error_rate: float,
    error_status: int,
    latency_ms: int,
    rate_limit: int,
    retry_after: int,
    truncate: str | None,
    truncate_fraction: float,
    invalid_json: str | None,
    seed: int,
    more_faults: tuple[str, ...],
    webhook: str | None,
    conversion_lag: bool,
    webhook_secret: str | None,
    log_level: str,
) -> None:
    """Run the hub emulator: the hub API huggingface_hub uses, over a folder of repo histories.

    The first line on stdout is `hubsim listening on http://HOST:PORT`. Control routes:
    POST /_sim/{org}/{name}/advance (reveal the next version), POST /_sim/{org}/{name}/rewind
    {"to": "vK"} and POST /_sim/{org}/{name}/squash (force-pushes), POST /_sim/{org}/{name}/rename
    {"to": "org/name"}, POST /_sim/datasets/{org}/{name}/convert (run the parquet converter), POST /_sim/reset, GET|POST /_sim/faults (JSON with the fault options' names,
    underscored), GET /_sim/state.
    """
    from hubwatch.hubsim.faults import FaultConfig, FaultError
    from hubwatch.hubsim.repos import HistoryError
    from hubwatch.hubsim.runner import (
        bind,
        build_state,
        demo_root,
        serve_forever,
        url_of,
    )

    import json

    try:
        extra: dict[str, object] = {}
        for item in more_faults:
            name, sep, raw = item.partition("=")
            if not sep:
                raise FaultError(f"--fault expects NAME=VALUE, got {item!r}")
            try:
                extra[name.strip()] = json.loads(raw)
            except ValueError:
                extra[name.strip()] = raw
        faults = FaultConfig(
            error_rate=error_rate,
            error_status=error_status,
            latency_ms=latency_ms,
            rate_limit=rate_limit,
            retry_after=retry_after,
            truncate=truncate,
            truncate_fraction=truncate_fraction,
            invalid_json=invalid_json,
            seed=seed,
        )
        if extra:
            faults = FaultConfig.from_mapping({**faults.to_json(), **extra})
        state = build_state(
            root or demo_root(),
            at=at,
            faults=faults,
            page_size=page_size,
            webhook=webhook,
            webhook_secret=webhook_secret,
            conversion_lag=conversion_lag,
        )
    except (HistoryError, FaultError, ValueError) as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        sock = bind(host, port)
    except OSError as exc:
        raise click.UsageError(f"cannot listen on {host}:{port}: {exc}") from exc
    click.echo(f"hubsim listening on {url_of(sock)}")
    sys.stdout.flush()
    serve_forever(state, sock, log_level)
