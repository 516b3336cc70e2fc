"""`hubwatch notify add|list|remove|test|status|flush`: messages out to Apprise URLs and signed webhooks."""

from __future__ import annotations

import json
import math
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from hubwatch.cli import cli, command_clock
from hubwatch.cli.console import err_console, escape, out_console
from hubwatch.cli.params import REPO_ID
from hubwatch.domain.records import Kind, RepoId, Severity
from hubwatch.domain.times import rfc3339

__all__ = ["notify"]

_KINDS = [k.value for k in Kind]
_SEVERITIES = [s.value for s in Severity]


@cli.group()
def notify() -> None:
    """Send a message (Slack, Discord, Teams, e-mail, a signed webhook, …) when watched repos change."""


@notify.command("add")
@click.argument("url")
@click.option("--repo", "repos", multiple=True, type=REPO_ID, metavar="ORG/NAME", help="Only this repo (repeatable).")
@click.option("--org", "orgs", multiple=True, metavar="ORG", help="Only this org's repos (repeatable).")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(_KINDS), help="Only changes of this kind (repeatable).")
@click.option("--min-severity", type=click.Choice(_SEVERITIES), default=None, help="Only changes at least this severe.")
@click.option("--pins", "pins", type=click.Path(exists=True, file_okay=True, path_type=Path), default=None,
              help="Only advisories that affect the pins found under this code base (as `hubwatch check`).")
@click.option("--digest", type=click.Choice(["daily", "weekly"]), default=None, help="One message per day or week.")
def add(url: str, repos: tuple[RepoId, ...], orgs: tuple[str, ...], kinds: tuple[str, ...],
        min_severity: str | None, pins: Path | None, digest: str | None) -> None:  # fmt: skip
    """Subscribe URL (any Apprise URL; https:// is a signed Standard Webhook) to changes."""
    from hubwatch.notify.pins import pin_repos
    from hubwatch.notify.sender import notify_store
    from hubwatch.notify.targets import BadTarget, check_target, is_webhook, new_secret, shown_url
    from hubwatch.storage.notify.notify import SubscriptionSpec
    from hubwatch.wiring import open_runtime

    try:
        url = check_target(url)
    except BadTarget as exc:
        raise click.BadParameter(str(exc), param_hint="URL") from exc
    pinned: list[str] = []
    if pins is not None:
        pinned = pin_repos(pins)
        if not pinned:
            raise click.BadParameter(f"no hub model pins found under {pins}: `hubwatch check {pins}` lists what "
                                     "the scanner sees", param_hint="--pins")  # fmt: skip
    secret = new_secret() if is_webhook(url) else None
    spec = SubscriptionSpec(
        url=url, secret=secret, repos=tuple(str(r) for r in repos), orgs=orgs, kinds=kinds,
        min_severity=Severity(min_severity) if min_severity else None,
        pins_path=str(pins.resolve()) if pins is not None else None, pin_repos=tuple(pinned), digest=digest,
    )  # fmt: skip
    out = out_console()
    with open_runtime(clock=command_clock()) as rt:
        sub = notify_store(rt.store, rt.clock).add(spec)
    out.print(f"subscription {sub.id}: {escape(shown_url(url))}")
    if pinned:
        out.print(f"pins under {escape(spec.pins_path)}: {escape(', '.join(pinned))}")
    if secret:
        out.print("signing secret (shown once; verify webhook-signature with it):")
        click.echo(secret)


@notify.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_(as_json: bool) -> None:
    """The subscriptions (targets without credentials; secrets are never shown again)."""
    from rich.table import Table

    from hubwatch.notify.sender import notify_store
    from hubwatch.notify.views import subscription_json
    from hubwatch.wiring import open_runtime

    with open_runtime(clock=command_clock()) as rt:
        subs = notify_store(rt.store, rt.clock).subscriptions()
    if as_json:
        click.echo(json.dumps([subscription_json(s) for s in subs], indent=2))
        return
    table = Table("id", "target", "filters", "digest")
    for sub in subs:
        shown = subscription_json(sub)
        filters = [*sub.repos, *(f"org:{o}" for o in sub.orgs), *(f"kind:{k}" for k in sub.kinds)]
        if sub.min_severity:
            filters.append(f"≥{sub.min_severity.value}")
        if sub.pins_path:
            filters.append(f"pins:{sub.pins_path}")
        table.add_row(str(sub.id), escape(shown["target"]), escape(", ".join(filters) or "everything"),
                      sub.digest or "at once")  # fmt: skip
    out_console().print(table if subs else "no subscriptions: `hubwatch notify add URL`")


@notify.command("remove")
@click.argument("sub_id", type=int, metavar="ID")
def remove(sub_id: int) -> None:
    """Delete subscription ID and its queued messages."""
    from hubwatch.notify.sender import notify_store
    from hubwatch.wiring import open_runtime

    with open_runtime(clock=command_clock()) as rt:
        removed = notify_store(rt.store, rt.clock).remove(sub_id)
    if not removed:
        raise click.UsageError(f"no subscription {sub_id}: `hubwatch notify list` shows the ids")
    out_console().print(f"removed subscription {sub_id}")


@notify.command("test")
@click.argument("sub_id", type=int, metavar="ID")
def test(sub_id: int) -> None:
    """Send a test message to subscription ID now (nothing is queued); exit 1 when it fails."""
    from hubwatch.notify.message import render
    from hubwatch.notify.sender import notify_store
    from hubwatch.notify.targets import DeliveryFailed, deliver, shown_url
    from hubwatch.wiring import open_runtime

    with open_runtime(clock=command_clock()) as rt:
        sub = notify_store(rt.store, rt.clock).subscription(sub_id)
        if sub is None:
            raise click.UsageError(f"no subscription {sub_id}: `hubwatch notify list` shows the ids")
        now = rt.clock()
        payload: dict[str, Any] = {"repo": "hubwatch/test", "sha": "0" * 40, "title": "hubwatch test message", "worst_severity": None,
                   "changes": [], "changes_total": 0, "advisories": [], "test": True}  # fmt: skip
        message = render([payload], rt.settings.public_url, f"{sub.id}:test:{now.isoformat()}")
        try:
            deliver(sub.url, sub.secret, message, rt.settings.notify_timeout_s)
        except DeliveryFailed as exc:
            err_console().print(f"[red]failed[/red] {escape(exc)}")
            click.get_current_context().exit(1)
    out_console().print(f"sent a test message to {escape(shown_url(sub.url))}")


@notify.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(as_json: bool) -> None:
    """Messages pending, sent, failed (retrying), dead and skipped, per subscription."""
    from rich.table import Table

    from hubwatch.notify.sender import notify_store
    from hubwatch.wiring import open_runtime

    with open_runtime(clock=command_clock()) as rt:
        counts = notify_store(rt.store, rt.clock).counts()
    columns = ("pending", "sent", "failed", "dead", "skipped")
    if as_json:
        click.echo(json.dumps({**{c: getattr(counts, c) for c in columns},
                               "by_subscription": {str(k): v for k, v in counts.by_subscription.items()}}))  # fmt: skip
        return
    table = Table("subscription", *columns)
    for sub_id, row in sorted(counts.by_subscription.items()):
        table.add_row(str(sub_id), str(row["pending"] + row["failed"]), *(str(row[c]) for c in columns[1:]))
    table.add_row("all", *(str(getattr(counts, c)) for c in columns), style="bold")
    out_console().print(table)


@notify.command("flush")
@click.option("--now", "retry_now", is_flag=True,
              help="Also send the messages waiting in backoff after a failure (the target is back).")
def flush(retry_now: bool) -> None:
    """Deliver the messages that are due now; with --now, also those waiting in backoff."""
    from hubwatch.notify.sender import Sender
    from hubwatch.wiring import open_runtime

    with open_runtime(clock=command_clock()) as rt:
        sender = Sender(rt.store, rt.settings, clock=rt.clock)
        report = sender.flush(retry_now=retry_now)
        now = rt.clock()
        waiting = sender.notes.in_backoff(now)
    line = (f"sent {report.sent}, retrying {report.retried}, dead {report.dead}, "
            f"skipped {report.skipped}, postponed {report.postponed} (rate limit)")  # fmt: skip
    if retry_now:
        line += f"; {report.hastened} taken out of backoff"
    if waiting.count and waiting.next_due is not None:
        line += (f"; {waiting.count} waiting in backoff, next attempt {rfc3339(waiting.next_due)} "
                 f"({_in(waiting.next_due - now)}); `hubwatch notify flush --now` sends them now")
    out_console().print(escape(line), highlight=False, soft_wrap=True)


def _in(delta: timedelta) -> str:
    """`in 40 s`, `in 4 min`, `in 3 h`, `in 2 days` (rounded up: never sooner than it is)."""
    seconds = max(math.ceil(delta.total_seconds()), 1)
    for unit, size in (("days", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= 2 * size or (unit == "min" and seconds >= 60):
            return f"in {math.ceil(seconds / size)} {unit}"
    return f"in {seconds} s"
