"""Where messages go: an Apprise URL (Slack, Discord, Teams, e-mail, …) or a signed webhook.

`https://` (and, for tests on one machine, loopback `http://`) URLs are webhooks signed per the
Standard Webhooks specification with the subscription's own `whsec_…` secret; every other URL is
handed to Apprise. URLs hold credentials: they are never logged, only shown through `shown_url`.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import logging
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "BadTarget",
    "DeliveryFailed",
    "Outgoing",
    "RedactUrls",
    "check_target",
    "deliver",
    "is_email",
    "is_webhook",
    "new_secret",
    "shown_url",
]

APPRISE_HELP = "https://github.com/caronc/apprise/wiki"
_EMAIL = frozenset({"mailto", "mailtos"})
# Apprise schemes whose host part is a real server name, not a token: shown by `shown_url`
_HOST_SCHEMES = _EMAIL | frozenset({"json", "jsons", "xml", "xmls", "form", "forms", "ntfy", "ntfys",
                                    "gotify", "gotifys", "matrix", "matrixs", "mqtt", "mqtts"})
_URL_IN_TEXT = re.compile(r"[A-Za-z][\w+.-]*://[^\s\"'<>]+")
_QUERY_IN_TEXT = re.compile(r"(?<=\S)\?[^\s\"'<>]+")
# the libraries a delivery goes through, which log request URLs (httpx at INFO, urllib3 at DEBUG)
_CHATTY_LOGGERS = ("httpx", "apprise", "urllib3.connectionpool", "requests")


class BadTarget(ValueError):
    """A URL hubwatch cannot deliver to; the message says what is wrong and the fix."""


class DeliveryFailed(Exception):
    """One delivery attempt failed (retried later); the message names the target and the reason."""


@dataclass(frozen=True)
class Outgoing:
    """One message, in every form a target may take."""

    msg_id: str  # stable across retries: the webhook-id a receiver de-duplicates on
    title: str
    markdown: str
    text: str
    data: dict[str, Any]  # the webhook body's `data`


def _scheme(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else ""


def is_webhook(url: str) -> bool:
    return _scheme(url) in ("http", "https")


def is_email(url: str) -> bool:
    return _scheme(url) in _EMAIL


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_target(url: str) -> str:
    """`url` stripped when hubwatch can deliver to it; BadTarget (what and the fix) otherwise."""
    url = url.strip()
    if not url or "://" not in url:
        raise BadTarget(f"{url!r} is not a URL: give an Apprise URL (slack://…, mailto://…, see {APPRISE_HELP}) "
                        "or an https:// webhook")  # fmt: skip
    if is_webhook(url):
        parts = urlsplit(url)
        host = parts.hostname or ""
        if not host:
            raise BadTarget("the webhook URL has no host: give https://HOST/PATH")
        if parts.scheme.lower() == "http" and not _loopback(host):
            raise BadTarget(f"plain http:// to {host} would send signed payloads unencrypted: use https://")
        return url
    import apprise

    if apprise.Apprise.instantiate(url) is None:
        raise BadTarget(
            f"{shown_url(url)} is not a valid Apprise URL (unknown scheme {_scheme(url)!r}, or a token or "
            f"address missing): see {APPRISE_HELP} for the form of each service"
        )
    return url


def shown_url(url: str) -> str:
    """The URL without credentials, tokens or query: safe to print and log."""
    if "://" not in url:
        return "<not a URL>"
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # not a port: Telegram's host is "BOTID:TOKEN"
        return f"{parts.scheme}://…"
    if is_webhook(url):
        # a webhook's path may carry its token (Discord's /api/webhooks/ID/TOKEN): the first
        # segment names the endpoint well enough
        first, _, rest = (parts.path or "/").lstrip("/").partition("/")
        return f"{parts.scheme}://{host}{port}/{first}{'/…' if rest else ''}"
    if parts.scheme.lower() in _HOST_SCHEMES and host:
        return f"{parts.scheme}://{host}{port}/…"
    # elsewhere Apprise's "host" is often a token (slack://TokenA/…, tgram://BOT_TOKEN/…)
    return f"{parts.scheme}://…"


def _shown_in_text(match: re.Match[str]) -> str:
    try:
        return shown_url(match.group(0))
    except ValueError:  # a port that is not a number
        return "<URL>"


class RedactUrls(logging.Filter):
    """Rewrites a log record's message with every URL as `shown_url` shows it and every query
    string dropped: the libraries delivering a message log the target's URL, tokens and all."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except (TypeError, ValueError):  # a malformed record: leave it to logging's own error path
            return True
        clean = _QUERY_IN_TEXT.sub("?…", _URL_IN_TEXT.sub(_shown_in_text, text))
        if clean != text:
            record.msg, record.args = clean, None
        return True


def _guard_library_logs() -> None:
    """Put RedactUrls on the loggers of the libraries that deliver (once per logger)."""
    for name in _CHATTY_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactUrls) for f in logger.filters):
            logger.addFilter(RedactUrls())


_guard_library_logs()


def new_secret() -> str:
    """A Standard Webhooks signing secret: `whsec_` and 24 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def _with_params(url: str, params: dict[str, str]) -> str:
    query = urlsplit(url).query
    have = {p.split("=", 1)[0].lower() for p in query.split("&") if p}
    extra = "&".join(f"{k}={v}" for k, v in params.items() if k not in have)
    if not extra:
        return url
    return f"{url}{'&' if '?' in url else '?'}{extra}"


def _post_webhook(url: str, secret: str, message: Outgoing, timeout_s: float) -> None:
    import httpx
    from standardwebhooks.webhooks import Webhook

    now = datetime.now(UTC)  # the wall clock, always: receivers refuse timestamps off by minutes

    body = json.dumps(
        {"type": "hubwatch.changes", "timestamp": now.isoformat(), "data": message.data},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    signature = Webhook(secret).sign(message.msg_id, now, body)
    headers = {
        "content-type": "application/json",
        "user-agent": "hubwatch",
        "webhook-id": message.msg_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": signature,
    }
    try:
        response = httpx.post(url, content=body.encode(), headers=headers, timeout=timeout_s, follow_redirects=False)
    except httpx.HTTPError as exc:
        raise DeliveryFailed(f"webhook {shown_url(url)}: {type(exc).__name__}: {exc}") from exc
    if not 200 <= response.status_code < 300:
        raise DeliveryFailed(f"webhook {shown_url(url)} answered HTTP {response.status_code}")


def _apprise(url: str, message: Outgoing, timeout_s: float) -> None:
    import apprise

    timeouts = {"cto": f"{timeout_s:g}", "rto": f"{timeout_s:g}"}
    email = is_email(url)
    target = _with_params(url, {**timeouts, "format": "text"} if email else timeouts)
    sender = apprise.Apprise()
    if not sender.add(target):
        raise DeliveryFailed(f"{shown_url(url)} is no longer a valid Apprise URL")
    with apprise.LogCapture(level=apprise.logging.WARNING) as log:  # type: ignore[no-untyped-call]
        ok = sender.notify(
            title=message.title,
            body=message.text if email else message.markdown,
            body_format=apprise.NotifyFormat.TEXT if email else apprise.NotifyFormat.MARKDOWN,
        )
        said = str(getattr(log, "getvalue", lambda: "")()).strip().splitlines()  # a StringIO without a path
    if not ok:
        why = said[-1] if said else "the service refused the message"
        raise DeliveryFailed(f"{shown_url(url)}: {why[-500:]}")


def deliver(url: str, secret: str | None, message: Outgoing, timeout_s: float) -> None:
    """Send `message` to `url` once; DeliveryFailed when the target did not take it."""
    if is_webhook(url):
        if not secret:
            raise DeliveryFailed(f"webhook {shown_url(url)} has no signing secret: remove and add it again")
        _post_webhook(url, secret, message, timeout_s)
    else:
        _apprise(url, message, timeout_s)
