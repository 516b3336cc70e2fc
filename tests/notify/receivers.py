"""Loopback receivers for the notify tests: a webhook endpoint that verifies Standard Webhooks
signatures with the library's own verifier, and an SMTP server (aiosmtpd)."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Mailbox", "WebhookReceiver", "free_port"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class WebhookReceiver:
    """POSTs to http://127.0.0.1:PORT/hook, verified with `standardwebhooks.Webhook(secret).verify`.

    `received` holds the verified bodies; `rejected` what failed verification. `stop()` closes the
    port (the receiver is down), `start()` opens the same port again. With `delay_s` it answers
    that late (a slow endpoint); `arrived` is set when a request came in, before the answer.
    """

    def __init__(self, port: int | None = None, delay_s: float = 0.0) -> None:
        self.port = port or free_port()
        self.delay_s = delay_s
        self.arrived = threading.Event()
        self.secret: str | None = None
        self.received: list[dict[str, Any]] = []
        self.ids: list[str] = []
        self.rejected: list[str] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> WebhookReceiver:
        from standardwebhooks.webhooks import Webhook, WebhookVerificationError

        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                outer.arrived.set()
                if outer.delay_s:
                    time.sleep(outer.delay_s)
                try:
                    assert outer.secret is not None, "the test did not give the receiver its secret"
                    data = Webhook(outer.secret).verify(body, dict(self.headers.items()))
                except (WebhookVerificationError, AssertionError) as exc:
                    outer.rejected.append(str(exc))
                    self.send_response(400)
                    self.end_headers()
                    return
                outer.received.append(data if isinstance(data, dict) else json.loads(body))
                outer.ids.append(str(self.headers["webhook-id"]))
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base name
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class Mailbox:
    """A real SMTP server on 127.0.0.1 (plain, no TLS): `messages` holds each mail's raw text."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.port = free_port()
        self.messages: list[tuple[str, list[str], str]] = []
        outer = self

        class Handler:
            async def handle_DATA(self, server: object, session: object, envelope: Any) -> str:  # noqa: N802
                outer.messages.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content.decode()))
                return "250 OK"

        self._controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self._controller.start()

    def url(self, to: str = "ops@example.com") -> str:
        """The Apprise URL that sends here: plain SMTP on a custom port, no login."""
        return f"mailto://hubwatch@example.com?smtp=127.0.0.1&port={self.port}&to={to}"

    def stop(self) -> None:
        self._controller.stop()
